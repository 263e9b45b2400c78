import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { ApiKey, ApiScope } from '../../config/api-keys.js';

/** Who is calling: the key's name (the identity in conversations and approvals) and what it may do. */
export interface Caller {
  name: string;
  scopes: readonly ApiScope[];
  /** The tenants the key is limited to (`slack:T…`); absent: every tenant. */
  tenants?: readonly string[];
}

const digest = (text: string) => createHash('sha256').update(text).digest();

/**
 * Checks `Authorization: Bearer <key>` against the configured keys. Keys are compared as SHA-256 digests
 * in constant time, every key every time, so neither timing nor an early match tells which one is near.
 */
export function keyChecker(keys: readonly ApiKey[]): (request: IncomingMessage) => Caller | undefined {
  const known = keys.map((key) => ({
    digest: digest(key.key),
    caller: { name: key.name, scopes: key.scopes, ...(key.tenants ? { tenants: key.tenants } : {}) },
  }));
  return (request) => {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
    if (!match?.[1]) return undefined;
    const presented = digest(match[1]);
    let found: Caller | undefined;
    for (const entry of known) if (timingSafeEqual(entry.digest, presented)) found = entry.caller;
    return found;
  };
}
