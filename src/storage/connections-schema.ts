import { index, integer, jsonb, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import type { ChatUser, Person, Platform } from '../core/contracts/events.js';
import type { ResumeState } from '../core/contracts/repositories.js';

/**
 * People's connections to OAuth-protected MCP servers (re-exported by `schema.ts`). Every secret is sealed
 * (AES-256-GCM, `sealed` with its `key_id`): tokens, a registered client's information, PKCE verifiers. Links
 * and OAuth `state` are stored only as hashes. Nothing here is readable without BUTLER_SECRET_KEY.
 */

/** One person's (or the shared) tokens for one server. */
export const oauthConnections = pgTable(
  'oauth_connections',
  {
    server: text('server').notNull(),
    /** `person:<name>`, `<platform>:<id>` for an unlisted identity, or `shared`. */
    ownerKey: text('owner_key').notNull(),
    /** The identity that connected it (for lists and the console), never a token. */
    owner: jsonb('owner').$type<Person>().notNull(),
    sealed: text('sealed').notNull(),
    keyId: text('key_id').notNull(),
    /** When the access token expires, if the server said (not secret): refreshed ahead of it. */
    expiresAt: timestamp('expires_at', { withTimezone: true }),
    scope: text('scope'),
    /** Bumped by every token write: a process that waited for another's refresh sees it happened. */
    version: integer('version').notNull().default(1),
    /** A refresh in progress somewhere holds this lease: one refresh per owner and server at a time. */
    refreshingUntil: timestamp('refreshing_until', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (table) => [primaryKey({ columns: [table.server, table.ownerKey] })],
);

/** What Butler knows of a server's authorization: its registered client, discovery and tool list. */
export const oauthServers = pgTable('oauth_servers', {
  server: text('server').primaryKey(),
  /** The client information the authorization server registered (sealed: it may hold a secret). */
  sealedClient: text('sealed_client'),
  clientKeyId: text('client_key_id'),
  /** RFC 9728 / RFC 8414 discovery as the SDK saved it (public metadata). */
  discovery: jsonb('discovery').$type<unknown>(),
  /** The server's `tools/list` as the first connection saw it, refreshed by later ones. */
  tools: jsonb('tools').$type<unknown[]>(),
  toolsListedAt: timestamp('tools_listed_at', { withTimezone: true }),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

/** One Connect link: single-use, short-lived, for one person and server. */
export const oauthFlows = pgTable(
  'oauth_flows',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    server: text('server').notNull(),
    ownerKey: text('owner_key').notNull(),
    owner: jsonb('owner').$type<Person>().notNull(),
    /** SHA-256 of the link's secret part: the link itself is never stored. */
    linkHash: text('link_hash').notNull().unique(),
    /** SHA-256 of the OAuth `state` sent with the authorization request, once the link was opened. */
    stateHash: text('state_hash').unique(),
    sealedVerifier: text('sealed_verifier'),
    /** SHA-256 of the secret in the cookie of the browser that opened the link: only it completes the flow. */
    browserHash: text('browser_hash'),
    /** The scopes this flow asks for when the server asked for more than a connection held (a step-up). */
    scope: text('scope'),
    verifierKeyId: text('verifier_key_id'),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    openedAt: timestamp('opened_at', { withTimezone: true }),
    completedAt: timestamp('completed_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (table) => [index('oauth_flows_expires_idx').on(table.expiresAt)],
);

/** A turn parked until a person connects a server: its calls run as that person once they have. */
export const connectionWaits = pgTable(
  'connection_waits',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    server: text('server').notNull(),
    ownerKey: text('owner_key').notNull(),
    /** The identity asked to connect (where the link went). */
    owner: jsonb('owner').$type<Person>().notNull(),
    conversationKey: text('conversation_key').notNull(),
    platform: text('platform').$type<Platform>().notNull(),
    requestedBy: jsonb('requested_by').$type<ChatUser>().notNull(),
    requesters: jsonb('requesters').$type<ChatUser[]>().notNull(),
    /** The tool calls of `resume.assistant` that wait for the connection. */
    callIds: jsonb('call_ids').$type<string[]>().notNull(),
    resume: jsonb('resume').$type<ResumeState>().notNull(),
    /** waiting → connected | expired */
    status: text('status').$type<'waiting' | 'connected' | 'expired'>().notNull().default('waiting'),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    endedAt: timestamp('ended_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (table) => [
    index('connection_waits_owner_idx').on(table.server, table.ownerKey, table.status),
    index('connection_waits_expires_idx').on(table.status, table.expiresAt),
  ],
);
