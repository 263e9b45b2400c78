import { ButlerError } from './errors.js';

/**
 * Files people share and files Butler sends: the shapes adapters, tools, storage and the core exchange.
 * Bytes never travel in the inbox: an inbound message names its files, the worker fetches each once
 * (through the adapter) and stores it by content hash; later turns read it from the database.
 */

/** A file on an inbound message, as the platform describes it. */
export interface InboundFile {
  /**
   * Identifies the file on its platform however often the message is delivered: the key its download is
   * deduplicated by (Slack file id, Feishu `message_id/file_key`, API and terminal: the stored file's id).
   */
  key: string;
  name: string;
  /** As the platform says; Butler also looks at the bytes. */
  mimeType?: string;
  /** In bytes, when the platform says (a file over the limit is skipped without downloading it). */
  size?: number;
  /**
   * Opaque to the core: where the adapter fetches the bytes from (Slack `url_private_download`, Feishu
   * `{message_id, file_key, type}` as JSON, a stored file's id for the API).
   */
  locator: string;
}

export interface FileBytes {
  name: string;
  mimeType: string;
  bytes: Uint8Array;
}

/** A file Butler sends into a conversation: a tool's output or the model's `attach_file`. */
export interface OutboundFile extends FileBytes {
  /** The stored file's id: `GET /api/v1/files/{id}` serves it. */
  id: string;
}

/** How the core reads a stored file's content for the model. */
export type FileKind = 'image' | 'text' | 'other';

/** A file as a message refers to it in history: what the model and compaction see, never the bytes. */
export interface FileMention {
  id: string;
  name: string;
  mimeType: string;
  size: number;
  kind: FileKind;
  /** One line: name, type, size, and pages or characters where known. */
  description: string;
  /** Estimated prompt tokens of what the model reads of it (its text, or the image's tiles); 0 for none. */
  tokens: number;
  /** What Butler left out of it, as said to the person ("read the first 50 of its 120 pages"). */
  note?: string;
}

/** Thrown by `ChatAdapter.fetchFile` when the bytes exceed the limit it was given: nothing is kept. */
export class FileTooLargeError extends ButlerError {
  constructor(readonly limitBytes: number) {
    super('file_too_large', `The file is larger than ${limitBytes} bytes`);
  }
}
