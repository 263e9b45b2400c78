import { createDecipheriv, createHash } from 'node:crypto';
import { PayloadError } from '../../core/contracts/errors.js';

const ivBytes = 16;

/**
 * Decrypts Feishu's `{"encrypt": …}` payloads: base64(iv || AES-256-CBC ciphertext), key = SHA-256(Encrypt Key),
 * PKCS#7 padding. Events and card callbacks use the same scheme.
 */
export function decryptPayload(encrypted: string, encryptKey: string): string {
  const data = Buffer.from(encrypted, 'base64');
  if (data.length <= ivBytes || (data.length - ivBytes) % ivBytes !== 0) {
    throw new PayloadError('Feishu encrypted payload has an invalid length');
  }
  const key = createHash('sha256').update(encryptKey, 'utf8').digest();
  try {
    const decipher = createDecipheriv('aes-256-cbc', key, data.subarray(0, ivBytes));
    return Buffer.concat([decipher.update(data.subarray(ivBytes)), decipher.final()]).toString('utf8');
  } catch (error) {
    throw new PayloadError(`Feishu encrypted payload cannot be decrypted: ${(error as Error).message}`);
  }
}
