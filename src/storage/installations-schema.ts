import { boolean, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';
import type { Platform } from '../core/contracts/events.js';

/**
 * Workspaces Butler was installed in over OAuth (re-exported by `schema.ts`): one row per installation, keyed
 * as the platform keys it (Slack: the team `T…`, or the enterprise `E…` of an org-wide install). The bot token
 * is sealed (AES-256-GCM, bound to the row's platform and key) and deleted when the app is uninstalled; the
 * row stays, so a re-install finds what the workspace had.
 */
export const installations = pgTable(
  'installations',
  {
    platform: text('platform').$type<Platform>().notNull(),
    key: text('key').notNull(),
    teamId: text('team_id'),
    enterpriseId: text('enterprise_id'),
    isEnterpriseInstall: boolean('is_enterprise_install').notNull().default(false),
    /** Who Butler is there (not secret): its user and bot ids. */
    botUserId: text('bot_user_id').notNull(),
    botId: text('bot_id').notNull(),
    /** The scopes the install granted, space-separated as Slack sends them. */
    scopes: text('scopes').notNull(),
    /** The person who installed it. */
    installerId: text('installer_id'),
    sealedToken: text('sealed_token'),
    /** With token rotation: the refresh token (sealed with the same key) and when the bot token expires. */
    sealedRefreshToken: text('sealed_refresh_token'),
    keyId: text('key_id'),
    tokenExpiresAt: timestamp('token_expires_at', { withTimezone: true }),
    /** A refresh in progress somewhere holds this lease: one refresh per installation across processes. */
    refreshingUntil: timestamp('refreshing_until', { withTimezone: true }),
    installedAt: timestamp('installed_at', { withTimezone: true }).notNull().defaultNow(),
    /** Set when the app was uninstalled or its token revoked: the token is gone, its events are ignored. */
    uninstalledAt: timestamp('uninstalled_at', { withTimezone: true }),
    /** The platform's last refusal of the token (`invalid_auth`, `account_inactive`), until a re-install. */
    lastError: text('last_error'),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (table) => [primaryKey({ columns: [table.platform, table.key] })],
);
