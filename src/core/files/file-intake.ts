import { randomUUID } from 'node:crypto';
import type { ChatAdapter } from '../contracts/adapter.js';
import { errorText } from '../contracts/errors.js';
import type { Person, Platform } from '../contracts/events.js';
import type { FileOrigin, StoredFile } from '../contracts/file-records.js';
import { type FileBytes, type FileMention, FileTooLargeError, type InboundFile } from '../contracts/files.js';
import type { Logger } from '../contracts/logger.js';
import type { Store } from '../contracts/store.js';
import { displayName, formatBytes } from '../text/index.js';
import { FileReadLimitError, PdfReader } from './pdf-reader.js';
import { type ReadLimits, readFileForModel, sniffMimeType } from './read-file.js';

/**
 * Brings shared files into a conversation: each is fetched once through its adapter (a file already stored
 * under its platform key, by an earlier delivery, attempt or process, is not fetched again), read for the
 * model, and stored by content hash. Limits hold per file and per turn; what was cut or skipped is said.
 */

export interface FileLimits {
  maxFileBytes: number;
  maxTurnBytes: number;
  maxFilesPerTurn: number;
  maxPdfPages: number;
  maxFileChars: number;
  maxTurnChars: number;
  imageMaxSide: number;
  vision: boolean;
  /** Longest a file may take to read (a PDF's text, an image's copy), in seconds. */
  readSeconds: number;
}

/** What one turn's files have used of its limits so far. */
export interface FileBudget {
  files: number;
  bytes: number;
  chars: number;
}

export interface ReceivedFiles {
  mentions: FileMention[];
  /** Lines for the person: what was cut or skipped, and why. */
  notes: string[];
  /** The files not read at all, and why (also in `notes`). */
  skipped: string[];
}

/** What the person hears of a file Butler could not read. */
function unreadable(error: unknown, file: FileBytes): string {
  const kind = sniffMimeType(file.bytes) === 'application/pdf' ? 'this PDF' : 'it';
  if (error instanceof FileReadLimitError)
    return error.reason === 'deadline'
      ? `could not read ${kind} in time (a file this slow to read may be crafted to be)`
      : `could not read ${kind}: it needs more memory than a file may take`;
  return 'could not read it (the file looks damaged or protected)';
}

export const newFileBudget = (): FileBudget => ({ files: 0, bytes: 0, chars: 0 });

export const mentionOf = (file: StoredFile): FileMention => ({
  id: file.id,
  name: file.name,
  mimeType: file.mimeType,
  size: file.size,
  kind: file.kind,
  description: file.description,
  tokens: file.tokens,
  ...(file.note ? { note: file.note } : {}),
});

/** Heap of a worker reading one PDF, and PDFs read at once (each takes a core while it reads). */
const pdfMemoryMb = 256;
const pdfsInParallel = 2;

export class FileIntake {
  private readonly pdfs: PdfReader;

  constructor(
    private readonly store: Store,
    private readonly limits: FileLimits,
    private readonly logger: Logger,
  ) {
    this.pdfs = new PdfReader({
      deadlineMs: limits.readSeconds * 1000,
      memoryMb: pdfMemoryMb,
      parallel: pdfsInParallel,
    });
  }

  /** Fetches (once), reads and stores the files of one message. Never throws for one bad file. */
  async receive(input: {
    adapter: ChatAdapter;
    conversationKey: string;
    /** The conversation's workspace: its platform fetches the file with that workspace's credentials. */
    workspace: string;
    uploader: Person | null;
    files: readonly InboundFile[];
    budget: FileBudget;
    signal?: AbortSignal;
  }): Promise<ReceivedFiles> {
    const received: ReceivedFiles = { mentions: [], notes: [], skipped: [] };
    for (const file of input.files) {
      const outcome = await this.receiveOne(input, file).catch((error: unknown) => {
        this.logger.warn({ err: error, file: file.key }, 'could not fetch a shared file');
        return `${file.name}: I could not download it (${errorText(error)})`;
      });
      if (typeof outcome === 'string') {
        received.notes.push(outcome);
        received.skipped.push(outcome);
      } else {
        received.mentions.push(outcome);
        if (outcome.note) received.notes.push(`${outcome.name}: I ${outcome.note}`);
      }
    }
    return received;
  }

  private async receiveOne(
    input: Parameters<FileIntake['receive']>[0],
    file: InboundFile,
  ): Promise<FileMention | string> {
    const { budget, adapter } = input;
    const known = await this.store.files.findByKey(adapter.platform, file.key);
    if (known) {
      spend(budget, known.size, known.text?.length ?? 0);
      return mentionOf(known);
    }
    const { maxFileBytes, maxTurnBytes, maxFilesPerTurn } = this.limits;
    if (budget.files >= maxFilesPerTurn)
      return `${file.name}: skipped, I read at most ${maxFilesPerTurn} files at a time`;
    if (file.size !== undefined && file.size > maxFileBytes)
      return `${file.name}: skipped, ${formatBytes(file.size)} is over my limit of ${formatBytes(maxFileBytes)} per file`;
    const room = Math.min(maxFileBytes, maxTurnBytes - budget.bytes);
    if (room <= 0 || (file.size !== undefined && file.size > room))
      return `${file.name}: skipped, the files of this message are over my limit of ${formatBytes(maxTurnBytes)}`;
    if (!adapter.fetchFile) return `${file.name}: skipped, Butler cannot download files here`;
    let fetched: FileBytes;
    try {
      fetched = await adapter.fetchFile(file, {
        maxBytes: room,
        workspace: input.workspace,
        ...(input.signal ? { signal: input.signal } : {}),
      });
    } catch (error) {
      if (error instanceof FileTooLargeError)
        return `${file.name}: skipped, it is over my limit of ${formatBytes(error.limitBytes)}`;
      throw error;
    }
    const stored = await this.save({
      conversationKey: input.conversationKey,
      platform: adapter.platform,
      key: file.key,
      origin: 'shared',
      uploader: input.uploader,
      file: { ...fetched, name: file.name, mimeType: file.mimeType ?? fetched.mimeType },
      budget,
    });
    return mentionOf(stored);
  }

  /** Stores a file handed over with its bytes (API, terminal) under a key of its own; see `ButlerIntake.shareFile`. */
  async share(input: {
    conversationKey: string;
    platform: Platform;
    uploader: Person;
    file: FileBytes;
  }): Promise<InboundFile> {
    if (input.file.bytes.byteLength > this.limits.maxFileBytes)
      throw new FileTooLargeError(this.limits.maxFileBytes);
    const stored = await this.save({ ...input, key: `upload:${randomUUID()}`, origin: 'shared' });
    return {
      key: stored.key,
      name: stored.name,
      mimeType: stored.mimeType,
      size: stored.size,
      locator: stored.id,
    };
  }

  /**
   * Reads and stores a file that arrived with its bytes (an API upload, the terminal, a tool's output).
   * Stored once under `key`: saving it again returns the file stored first.
   */
  async save(input: {
    conversationKey: string;
    platform: Platform;
    key: string;
    origin: FileOrigin;
    uploader: Person | null;
    file: FileBytes;
    budget?: FileBudget;
  }): Promise<StoredFile> {
    const { budget } = input;
    // A name is the uploader's words: one line, of a sane length, whatever the platform passed on.
    const name = displayName(input.file.name);
    const file = { ...input.file, name };
    const roomChars = budget
      ? Math.max(0, this.limits.maxTurnChars - budget.chars)
      : this.limits.maxTurnChars;
    const readLimits: ReadLimits = {
      maxPdfPages: this.limits.maxPdfPages,
      maxChars: Math.min(this.limits.maxFileChars, roomChars),
      imageMaxSide: this.limits.imageMaxSide,
      vision: this.limits.vision,
      imageSeconds: this.limits.readSeconds,
    };
    const read = await readFileForModel(file, readLimits, this.pdfs).catch((error: unknown) => {
      this.logger.warn({ err: error, file: file.name }, 'could not read a file');
      return {
        kind: 'other' as const,
        mimeType: file.mimeType || 'application/octet-stream',
        text: null,
        tokens: 0,
        description: `${file.name} (${file.mimeType || 'unknown type'}, ${formatBytes(file.bytes.byteLength)})`,
        note: unreadable(error, file),
      };
    });
    const stored = await this.store.files.save({
      conversationKey: input.conversationKey,
      platform: input.platform,
      key: input.key,
      origin: input.origin,
      uploadedBy: input.uploader,
      name: file.name,
      mimeType: read.mimeType,
      size: file.bytes.byteLength,
      kind: read.kind,
      description: read.description,
      tokens: read.tokens,
      ...(read.note ? { note: read.note } : {}),
      text: read.text,
      previewMimeType: 'preview' in read && read.preview ? read.preview.mimeType : null,
      bytes: file.bytes,
      ...('preview' in read && read.preview ? { preview: read.preview.bytes } : {}),
    });
    if (budget) spend(budget, stored.size, stored.text?.length ?? 0);
    return stored;
  }
}

function spend(budget: FileBudget, bytes: number, chars: number) {
  budget.files += 1;
  budget.bytes += bytes;
  budget.chars += chars;
}

/** The lines a user message gets for its files: what the model and compaction read of them. */
export function fileLines(mentions: readonly FileMention[], skipped: readonly string[]): string {
  return [
    ...mentions.map(
      (file) => `[shared file ${file.id}: ${file.description}${file.note ? `; Butler ${file.note}` : ''}]`,
    ),
    ...skipped.map((line) => `[not read: ${line}]`),
  ].join('\n');
}
