import { createDecipheriv, createHash } from 'node:crypto';
import { PayloadError } from '../../core/contracts/errors.js';

const ivBytes = 16;

/**
 * Decrypts Feishu's `{"encrypt": …}` payloads: base64(iv || AES-256-CBC ciphertext), key = SHA-256(Encrypt Key),
 * PKCS#7 padding. Events and card callbacks use the same scheme.
 */
const utf8 = new TextDecoder('utf-8', { fatal: true });

export function decryptPayload(encrypted: string, encryptKey: string): string {
  const data = Buffer.from(encrypted, 'base64');
  if (data.length <= ivBytes || (data.length - ivBytes) % ivBytes !== 0) {
    throw new PayloadError('Feishu encrypted payload has an invalid length');
  }
  const key = createHash('sha256').update(encryptKey, 'utf8').digest();
  try {
    const decipher = createDecipheriv('aes-256-cbc', key, data.subarray(0, ivBytes));
    const plain = Buffer.concat([decipher.update(data.subarray(ivBytes)), decipher.final()]);
    // Feishu encrypts JSON text. A wrong key still yields valid padding once in 256 tries; its bytes are then
    // noise, which is almost never UTF-8: refused here rather than handed on as text.
    return utf8.decode(plain);
  } catch (error) {
    throw new PayloadError(`Feishu encrypted payload cannot be decrypted: ${(error as Error).message}`);
  }
}
