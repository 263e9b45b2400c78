import * as lark from '@larksuiteoapi/node-sdk';
import type { SecretBox } from '../../core/connections/secret-box.js';
import type { FeishuSecretRepository } from '../../core/contracts/feishu-tenants.js';
import type { Logger } from '../../core/contracts/logger.js';

/** The Lark SDK's cache, able to drop an entry (a tenant's token, once the app is removed from the tenant). */
export type SealedLarkCache = lark.Cache & { forget(name: string): Promise<void> };

/** Where the SDK caches a store app's token for a tenant (`getMarketTenantAccessToken`, SDK 1.74). */
export const tenantTokenEntry = (tenantKey: string) => `larkMarketAccessToken${tenantKey}`;

/**
 * How long a pushed `app_ticket` is used. Feishu pushes one every hour and documents no lifetime, so the SDK
 * stores it without one; a ticket kept through a long outage would then fail every token request until the next
 * push. Older than this it counts as absent, and the SDK asks Feishu to resend it.
 */
export const ticketTrustedForMs = 90 * 60_000;
/** The SDK's key for the ticket (a Symbol), as this cache names it. */
const ticketEntry = lark.CAppTicket.toString();

/**
 * The Lark SDK's cache for a store app, kept in Postgres: the `app_ticket` Feishu pushes to whichever process
 * takes the webhook, and each tenant's `tenant_access_token`, are then every process's, and survive restarts.
 * Values are sealed with BUTLER_SECRET_KEY, bound to the app and the entry. A token this process read stays in
 * memory until it expires (the SDK asks before every call); the ticket is read afresh each time it is needed,
 * since another process may hold a newer one.
 */
export function sealedLarkCache(options: {
  appId: string;
  repository: FeishuSecretRepository;
  secrets: SecretBox;
  logger: Logger;
  now?: () => number;
}): SealedLarkCache {
  const { appId, repository, secrets, logger } = options;
  const now = options.now ?? Date.now;
  const tokens = new Map<string, { value: string; expiresAt: number }>();
  const context = (name: string) => `feishu secret\0${appId}\0${name}`;
  /** The SDK names the app of every entry (`namespace`); another app's entries are none of this cache's. */
  const ours = (namespace: string | undefined) => namespace === appId;

  async function read(name: string): Promise<string | undefined> {
    const stored = await repository.get(appId, name);
    if (!stored || (stored.expiresAt && stored.expiresAt.getTime() <= now())) return undefined;
    const value = secrets.open(stored.sealed, context(name));
    if (name !== ticketEntry) tokens.set(name, { value, expiresAt: stored.expiresAt?.getTime() ?? 0 });
    return value;
  }

  return {
    async get(key, cacheOptions) {
      if (!ours(cacheOptions?.namespace)) return undefined;
      const name = key.toString();
      const remembered = tokens.get(name);
      if (remembered && remembered.expiresAt > now()) return remembered.value;
      try {
        return await read(name);
      } catch (error) {
        // Unreadable (the database, or a key no longer configured): as good as absent, Feishu gives another. The
        // SDK calls this without waiting at times, so it must not throw.
        logger.warn(
          { appId, entry: name, err: error },
          'Feishu store app credential unreadable; asking again',
        );
        return undefined;
      }
    },

    async set(key, value, expire, cacheOptions) {
      if (!ours(cacheOptions?.namespace) || typeof value !== 'string') return false;
      const name = key.toString();
      // The SDK passes `expire` as an absolute time in epoch milliseconds, and none for the ticket alone.
      const expiresAt = new Date(
        name === ticketEntry || expire === undefined ? now() + ticketTrustedForMs : expire,
      );
      await repository.put(appId, name, secrets.seal(value, context(name)), expiresAt);
      if (name !== ticketEntry) tokens.set(name, { value, expiresAt: expiresAt.getTime() });
      return true;
    },

    async forget(name) {
      tokens.delete(name);
      await repository.delete(appId, name);
    },
  };
}
