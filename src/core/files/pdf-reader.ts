import { Worker } from 'node:worker_threads';
import { ButlerError } from '../contracts/errors.js';

/**
 * Reads PDFs' text off the main thread: each PDF in a worker thread of its own (pdf-text-worker.mjs), with a
 * deadline and a memory cap, at most `parallel` at once. pdf.js can be made slow by a small crafted file;
 * here such a file costs one worker thread its deadline, never the event loop every platform answers on.
 */

export interface PdfText {
  text: string;
  pages: number;
  readPages: number;
  /** The text went past the character limit: the reader stopped there. */
  cut: boolean;
}

/** A file that took longer than its deadline to read, or more memory than allowed: not read. */
export class FileReadLimitError extends ButlerError {
  constructor(
    readonly reason: 'deadline' | 'memory',
    message: string,
  ) {
    super('file_read_limit', message);
  }
}

export interface PdfReaderOptions {
  deadlineMs: number;
  /** Heap of one reading worker, in megabytes. */
  memoryMb: number;
  parallel: number;
}

export class PdfReader {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly options: PdfReaderOptions) {}

  async read(bytes: Uint8Array, limits: { maxPages: number; maxChars: number }): Promise<PdfText> {
    await this.slot();
    try {
      return await this.inWorker(bytes, limits);
    } finally {
      this.running -= 1;
      this.waiting.shift()?.();
    }
  }

  private async slot(): Promise<void> {
    if (this.running < this.options.parallel) {
      this.running += 1;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.running += 1;
  }

  private inWorker(bytes: Uint8Array, limits: { maxPages: number; maxChars: number }): Promise<PdfText> {
    const { deadlineMs, memoryMb } = this.options;
    const worker = new Worker(new URL('./pdf-text-worker.mjs', import.meta.url), {
      resourceLimits: { maxOldGenerationSizeMb: memoryMb, maxYoungGenerationSizeMb: 32 },
    });
    return new Promise<PdfText>((resolve, reject) => {
      let settled = false;
      const end = (outcome: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        void worker.terminate();
        outcome();
      };
      // The deadline counts from the worker's start: loading pdf.js is part of reading the file.
      const timer = setTimeout(
        () =>
          end(() =>
            reject(new FileReadLimitError('deadline', `reading the PDF took longer than ${deadlineMs} ms`)),
          ),
        deadlineMs,
      );
      worker.on('message', (answer: { result?: PdfText; error?: string }) =>
        end(() => (answer.result ? resolve(answer.result) : reject(new Error(answer.error ?? 'unreadable')))),
      );
      worker.on('error', (error: Error & { code?: string }) =>
        end(() =>
          reject(
            error.code === 'ERR_WORKER_OUT_OF_MEMORY'
              ? new FileReadLimitError('memory', `reading the PDF needed more than ${memoryMb} MB`)
              : error,
          ),
        ),
      );
      worker.on('exit', () => end(() => reject(new Error('the PDF reader stopped'))));
      // pdf.js takes ownership of (and detaches) the buffer it is given: a copy goes to the worker.
      const copy = new Uint8Array(bytes);
      worker.postMessage({ id: 1, bytes: copy, maxPages: limits.maxPages, maxChars: limits.maxChars }, [
        copy.buffer,
      ]);
    });
  }
}
