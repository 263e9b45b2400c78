import type { IncomingMessage } from 'node:http';
import { ButlerError, PayloadTooLargeError } from '../core/contracts/errors.js';

/** Platform payloads are small; Slack's largest (block_actions with a full message) stay well under this. */
export const defaultBodyLimitBytes = 1024 * 1024;

/**
 * The client went away before its body was complete, or sent it too slowly: the HTTP server cuts a request
 * not fully received within its deadline (and answers 408 itself). Nothing is left to answer.
 */
export class RequestAbortedError extends ButlerError {
  constructor(options?: { cause?: unknown }) {
    super('request_aborted', 'The request body was not received completely', options);
  }
}

/** Reads the raw request body (signatures are computed over these exact bytes), refusing oversized ones. */
export async function readBody(
  request: IncomingMessage,
  limitBytes = defaultBodyLimitBytes,
): Promise<Buffer> {
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > limitBytes) {
    request.resume();
    throw new PayloadTooLargeError(limitBytes);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of request) {
      const buffer = chunk as Buffer;
      size += buffer.length;
      if (size > limitBytes) {
        request.resume();
        throw new PayloadTooLargeError(limitBytes);
      }
      chunks.push(buffer);
    }
  } catch (error) {
    if (error instanceof PayloadTooLargeError) throw error;
    throw new RequestAbortedError({ cause: error });
  }
  return Buffer.concat(chunks);
}
