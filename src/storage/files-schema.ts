import {
  customType,
  index,
  integer,
  jsonb,
  pgTable,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import type { Person, Platform } from '../core/contracts/events.js';
import type { FileOrigin } from '../core/contracts/file-records.js';
import type { FileKind } from '../core/contracts/files.js';

/**
 * Shared and produced files (re-exported by `schema.ts`, kept apart to keep that file readable): each
 * content once by SHA-256, each file with its conversation, uploader and the key it was fetched by.
 */

const createdAt = () => timestamp('created_at', { withTimezone: true }).notNull().defaultNow();

/** Postgres `bytea`: Buffers from postgres.js, Uint8Arrays from PGlite; both are Uint8Arrays. */
const bytea = customType<{ data: Uint8Array; driverData: Uint8Array }>({
  dataType: () => 'bytea',
  toDriver: (value) =>
    Buffer.isBuffer(value) ? value : Buffer.from(value.buffer, value.byteOffset, value.byteLength),
});

/** Each distinct content once, by its SHA-256 (hex): a file shared twice, or a preview, is stored once. */
export const fileContents = pgTable('file_contents', {
  sha256: text('sha256').primaryKey(),
  bytes: bytea('bytes').notNull(),
  size: integer('size').notNull(),
  createdAt: createdAt(),
});

export const files = pgTable(
  'files',
  {
    id: text('id').primaryKey(),
    conversationKey: text('conversation_key').notNull(),
    platform: text('platform').$type<Platform>().notNull(),
    /** What it was fetched by (unique per platform), or `call:<tool call id>:<n>` for produced files. */
    key: text('key').notNull(),
    origin: text('origin').$type<FileOrigin>().notNull(),
    uploadedBy: jsonb('uploaded_by').$type<Person>(),
    name: text('name').notNull(),
    mimeType: text('mime_type').notNull(),
    size: integer('size').notNull(),
    kind: text('kind').$type<FileKind>().notNull(),
    description: text('description').notNull(),
    tokens: integer('tokens').notNull(),
    note: text('note'),
    sha256: text('sha256')
      .notNull()
      .references(() => fileContents.sha256),
    text: text('text'),
    previewSha256: text('preview_sha256').references(() => fileContents.sha256),
    previewMimeType: text('preview_mime_type'),
    deliveredAs: text('delivered_as'),
    createdAt: createdAt(),
  },
  (table) => [
    uniqueIndex('files_platform_key_idx').on(table.platform, table.key),
    index('files_conversation_idx').on(table.conversationKey, table.createdAt),
  ],
);
