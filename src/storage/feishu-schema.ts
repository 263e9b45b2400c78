import { pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * Feishu tenants and the credentials of store apps (re-exported by `schema.ts`).
 *
 * `feishu_tenants`: which app serves each tenant, learned from the tenant's events. Keyed by the tenant alone,
 * so one tenant is served by one app: a second app's events for it are dropped rather than mixed in.
 *
 * `feishu_secrets`: what the Lark SDK caches for a store app (its `app_ticket` and each tenant's token),
 * shared by every process and sealed (AES-256-GCM, bound to the app and the entry's name).
 */
export const feishuTenants = pgTable('feishu_tenants', {
  tenantKey: text('tenant_key').primaryKey(),
  appId: text('app_id').notNull(),
  firstSeenAt: timestamp('first_seen_at', { withTimezone: true }).notNull().defaultNow(),
  /** Set by the store app's `app_uninstalled`; cleared by the tenant's next event (a re-install). */
  uninstalledAt: timestamp('uninstalled_at', { withTimezone: true }),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

export const feishuSecrets = pgTable(
  'feishu_secrets',
  {
    appId: text('app_id').notNull(),
    name: text('name').notNull(),
    sealedValue: text('sealed_value').notNull(),
    keyId: text('key_id').notNull(),
    /** When the value stops being good (for the ticket, which Feishu pushes hourly, a while after it came). */
    expiresAt: timestamp('expires_at', { withTimezone: true }),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (table) => [primaryKey({ columns: [table.appId, table.name] })],
);
