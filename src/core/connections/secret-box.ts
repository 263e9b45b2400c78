import { createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Secrets at rest (OAuth tokens, a registered client's secret, a PKCE verifier): AES-256-GCM with a random
 * 96-bit nonce per value, the key's id stored beside the ciphertext so keys can rotate. The first key seals;
 * every key opens what it sealed. What a sealed value belongs to (a connection's server and owner) is bound
 * in as associated data: a row's ciphertext copied into another row does not open there.
 */

export interface SecretKey {
  /** Short and public: which key sealed a value (a hash of the key, never the key). */
  id: string;
  key: Buffer;
}

/** A sealed value as stored: `v1.<nonce>.<ciphertext>.<tag>` in base64url, and the id of its key. */
export interface Sealed {
  keyId: string;
  value: string;
}

export class SecretBoxError extends Error {
  override name = 'SecretBoxError';
}

const version = 'v1';
/**
 * GCM checks only as many tag bytes as it is given: a value whose tag was cut to 4 bytes would open after
 * 2^32 tries at most. Every tag is whole.
 */
const tagBytes = 16;

/** The key of 32 bytes given as 64 hex digits or base64 (44 characters), or undefined if it is neither. */
export function parseSecretKey(text: string): SecretKey | undefined {
  const trimmed = text.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(trimmed)
    ? Buffer.from(trimmed, 'hex')
    : /^[A-Za-z0-9+/_-]{43}=?$/.test(trimmed)
      ? Buffer.from(trimmed, 'base64')
      : undefined;
  if (key?.length !== 32) return undefined;
  return {
    id: createHash('sha256').update('butler secret key id\0').update(key).digest('hex').slice(0, 12),
    key,
  };
}

/** A new random key, in the text form `parseSecretKey` reads. */
export const newSecretKeyText = () => randomBytes(32).toString('base64');

export class SecretBox {
  private readonly byId: ReadonlyMap<string, Buffer>;
  private readonly current: SecretKey;
  /** A key of its own for MACs, derived from the sealing key (one key, one purpose). */
  private readonly macKey: Buffer;

  /** `keys[0]` seals; all of them open. */
  constructor(keys: readonly SecretKey[]) {
    const [current] = keys;
    if (!current) throw new SecretBoxError('no secret key');
    this.current = current;
    this.byId = new Map(keys.map((key) => [key.id, key.key]));
    this.macKey = Buffer.from(hkdfSync('sha256', current.key, Buffer.alloc(0), 'butler mac', 32));
  }

  /**
   * HMAC-SHA256 of `message` for `purpose`, in base64url (43 characters): a secret only this key can derive
   * again, so it need not be stored (a Connect link is derived from its flow's id).
   */
  mac(purpose: string, message: string): string {
    return createHmac('sha256', this.macKey).update(`${purpose}\0${message}`).digest('base64url');
  }

  /** The id of the key that seals now: a row sealed with another is sealed again when next written. */
  get keyId(): string {
    return this.current.id;
  }

  seal(plaintext: string, context: string): Sealed {
    const nonce = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.current.key, nonce, { authTagLength: tagBytes });
    cipher.setAAD(Buffer.from(context));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    const parts = [nonce, body, cipher.getAuthTag()].map((part) => part.toString('base64url'));
    return { keyId: this.current.id, value: [version, ...parts].join('.') };
  }

  /** The plaintext; throws `SecretBoxError` for an unknown key, a tampered value or another context. */
  open(sealed: Sealed, context: string): string {
    const key = this.byId.get(sealed.keyId);
    if (!key) throw new SecretBoxError(`no key with id ${sealed.keyId} is configured (BUTLER_SECRET_KEY)`);
    const [tag, nonce, body, authTag] = sealed.value.split('.');
    if (tag !== version || !nonce || body === undefined || !authTag)
      throw new SecretBoxError('not a sealed value');
    try {
      const tagValue = Buffer.from(authTag, 'base64url');
      if (tagValue.length !== tagBytes) throw new SecretBoxError('a cut tag');
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(nonce, 'base64url'), {
        authTagLength: tagBytes,
      });
      decipher.setAAD(Buffer.from(context));
      decipher.setAuthTag(tagValue);
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString(
        'utf8',
      );
    } catch {
      throw new SecretBoxError('a sealed value does not open: tampered with, or sealed for another row');
    }
  }
}
