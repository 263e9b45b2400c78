import { index, json, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import type { ChatUser, Platform } from '../core/contracts/events.js';
import type { InputRequest, InputResponse } from '../core/contracts/input-needed.js';
import type { ResumeState } from '../core/contracts/repositories.js';

/**
 * A question an MCP server asked its call's requester mid-call (re-exported by `schema.ts`): a turn parked until
 * it is answered (2026-07-28), or, with `live_until`, a call held open in the process that made it (2025 session).
 */
export const inputWaits = pgTable(
  'input_waits',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    conversationKey: text('conversation_key').notNull(),
    platform: text('platform').$type<Platform>().notNull(),
    server: text('server').notNull(),
    toolName: text('tool_name').notNull(),
    toolCallId: text('tool_call_id').notNull(),
    /**
     * As the server sent them, in `json` (not `jsonb`, which reorders object keys): a form's fields keep the order
     * the server gave, wherever and whenever the form is drawn.
     */
    requests: json('requests').$type<InputRequest[]>().notNull(),
    /** The server's opaque state, sent back untouched with the answers. */
    requestState: text('request_state'),
    requestedBy: jsonb('requested_by').$type<ChatUser>().notNull(),
    requesters: jsonb('requesters').$type<ChatUser[]>().notNull(),
    /** What the parked turn goes on from; none for a live question (its turn is still running). */
    resume: jsonb('resume').$type<ResumeState>(),
    answers: jsonb('answers').$type<Record<string, InputResponse>>().notNull().default({}),
    answeredBy: jsonb('answered_by').$type<ChatUser>(),
    formMessageId: text('form_message_id'),
    /** When the requester was reminded in a direct message (once). */
    remindedAt: timestamp('reminded_at', { withTimezone: true }),
    /**
     * A live question: until when the process holding its call vouches for it (it renews this while it waits).
     * Past it, with no answer, the question lapsed.
     */
    liveUntil: timestamp('live_until', { withTimezone: true }),
    /** waiting → answered | expired | lapsed (a live question whose call ended first) */
    status: text('status')
      .$type<'waiting' | 'answered' | 'expired' | 'lapsed'>()
      .notNull()
      .default('waiting'),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    endedAt: timestamp('ended_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (table) => [index('input_waits_expires_idx').on(table.status, table.expiresAt)],
);
