import type { IncomingMessage } from 'node:http';
import { PayloadTooLargeError } from '../core/errors.js';

/** Platform payloads are small; Slack's largest (block_actions with a full message) stay well under this. */
export const defaultBodyLimitBytes = 1024 * 1024;

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
  for await (const chunk of request) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > limitBytes) {
      request.resume();
      throw new PayloadTooLargeError(limitBytes);
    }
    chunks.push(buffer);
  }
  return Buffer.concat(chunks);
}
