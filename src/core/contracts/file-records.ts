import type { Person, Platform } from './events.js';
import type { FileMention } from './files.js';

/**
 * Storage contract of files: each file's content is stored once by its SHA-256, with the conversation it
 * belongs to, who shared it and the key it was fetched by, so no delivery, retry or process fetches it twice.
 */

/** Where a stored file came from. */
export type FileOrigin = 'shared' | 'tool' | 'model';

export interface StoredFile extends FileMention {
  conversationKey: string;
  platform: Platform;
  /**
   * The platform key it was fetched by (shared files: Slack file id, Feishu `message_id/file_key`, a
   * stored id for the API), or `call:<tool call id>:<n>` for a file a tool or the model produced.
   */
  key: string;
  origin: FileOrigin;
  uploadedBy: Person | null;
  sha256: string;
  /** Text the model reads (extracted from a PDF, decoded from a text file), already cut to the limits. */
  text: string | null;
  /** A smaller copy of an image for the model (stored under its own content hash), or null. */
  previewSha256: string | null;
  previewMimeType: string | null;
  /** The platform message or file id it was sent as, once sent (produced files). */
  deliveredAs: string | null;
  createdAt: Date;
}

export type NewStoredFile = Omit<
  StoredFile,
  'id' | 'sha256' | 'previewSha256' | 'deliveredAs' | 'createdAt'
> & {
  bytes: Uint8Array;
  /** The smaller copy of an image, when one was made. */
  preview?: Uint8Array;
};

export interface FileRepository {
  /** The file stored under `key` on `platform`, if any (no bytes). */
  findByKey(platform: Platform, key: string): Promise<StoredFile | undefined>;
  /**
   * Stores a file (its content once per SHA-256). A file already stored under the same platform and key
   * is returned as it is: two deliveries of one message keep one file.
   */
  save(file: NewStoredFile): Promise<StoredFile>;
  get(id: string): Promise<StoredFile | undefined>;
  /** Several files by id, in no particular order (missing ids are left out). */
  list(ids: readonly string[]): Promise<StoredFile[]>;
  /** The bytes stored under a content hash (a file's `sha256` or `previewSha256`). */
  content(sha256: string): Promise<Uint8Array | undefined>;
  /** Records that a produced file was sent; false when it was recorded as sent already. */
  markDelivered(id: string, deliveredAs: string): Promise<boolean>;
}
