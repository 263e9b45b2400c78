import type { Readable } from 'node:stream';
import { FileTooLargeError } from '../../core/contracts/files.js';
import { FeishuApiError, scopeMissingCode, toFeishuApiError } from './feishu-api-error.js';
import { asRecord, type JsonRecord, recordField, stringField } from './fields.js';

/**
 * Reading what the Lark SDK streams (`messageResource.get` answers with `{getReadableStream, headers}`, its
 * failures with the error body as a stream too), within a byte limit and an abort signal.
 */

/** "Not supported for sub-messages of merged forwards or for cards" (open.feishu.cn im-v1/message-resource/get). */
export const resourceUnsupportedCode = 234043;
/** An error answer is a small JSON object; anything longer is not read. */
const errorBodyLimitBytes = 64 * 1024;

/** Reads `stream` whole, refusing (and closing) it past `maxBytes`; `signal` stops it. */
export async function readWithin(stream: Readable, maxBytes: number, signal?: AbortSignal): Promise<Buffer> {
  const stop = () => stream.destroy(signal?.reason as Error);
  if (signal?.aborted) stop();
  signal?.addEventListener('abort', stop, { once: true });
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of stream) {
      const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
      size += buffer.length;
      if (size > maxBytes) {
        stream.destroy();
        throw new FileTooLargeError(maxBytes);
      }
      chunks.push(buffer);
    }
  } finally {
    signal?.removeEventListener('abort', stop);
  }
  signal?.throwIfAborted();
  return Buffer.concat(chunks);
}

/**
 * `request`'s answer, or the signal's reason as soon as it aborts (the SDK's typed calls take no signal). An
 * answer that arrives after that is handed to `discard`, so its stream does not stay open.
 */
export function untilAborted<T>(
  request: Promise<T>,
  signal: AbortSignal | undefined,
  discard: (late: T) => void,
): Promise<T> {
  if (!signal) return request;
  return new Promise<T>((resolve, reject) => {
    const abort = () => {
      reject(signal.reason);
      request.then(discard, () => {});
    };
    if (signal.aborted) return abort();
    signal.addEventListener('abort', abort, { once: true });
    request.then(
      (value) => {
        signal.removeEventListener('abort', abort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', abort);
        reject(error);
      },
    );
  });
}

/** A header of an SDK answer (axios lower-cases the names). */
export function headerValue(headers: unknown, name: string): string | undefined {
  return stringField(asRecord(headers), name);
}

/**
 * What a person can do about a refused file call, from Feishu's code and message. A missing scope: the scopes
 * Feishu's message names (it lists the ones it accepts), else `scope`.
 */
export function explainRefusal(code: number | undefined, message: string | undefined, scope: string): string {
  if (code === scopeMissingCode) {
    const add = message?.includes('scopes is required')
      ? ` (Feishu: "${message}"); add one of those scopes`
      : `; add ${scope}`;
    return `the Feishu app lacks a permission${add} under Permissions & Scopes and publish a new version`;
  }
  if (code === resourceUnsupportedCode) return 'Feishu does not serve files of forwarded messages or cards';
  return message ? `Feishu says: ${message}` : '';
}

async function errorBody(error: unknown): Promise<JsonRecord | undefined> {
  const data = recordField(asRecord(error), 'response')?.data;
  const stream = data as Readable | undefined;
  if (typeof stream?.pipe !== 'function') return asRecord(data);
  try {
    return asRecord(JSON.parse((await readWithin(stream, errorBodyLimitBytes)).toString('utf8')));
  } catch {
    return undefined;
  }
}

/** A failed streamed call as FeishuApiError, its code read from the streamed error body. */
export async function fileCallError(operation: string, error: unknown, scope: string): Promise<Error> {
  if (!recordField(asRecord(error), 'response')) return toFeishuApiError(operation, error);
  const body = await errorBody(error);
  const code = typeof body?.code === 'number' ? body.code : undefined;
  const message = stringField(body, 'msg');
  const status = recordField(asRecord(error), 'response')?.status;
  return new FeishuApiError(
    operation,
    code,
    typeof status === 'number' ? status : undefined,
    (error as Error).message ?? 'network error',
    explainRefusal(code, message, scope) || undefined,
  );
}
