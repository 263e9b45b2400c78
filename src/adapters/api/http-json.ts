import type { IncomingMessage, ServerResponse } from 'node:http';
import { ButlerError } from '../../core/contracts/errors.js';
import { readBody } from '../../http/body.js';
import { sendJson } from '../../http/server.js';

/** JSON in and out for the API: small bodies, clear error answers. */

/** An answer other than success: status, a stable code for programs, a sentence for people. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** Sent with the answer, e.g. `retry-after`. */
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }
}

/** A JSON body without files: room for the longest message text and more. */
export const jsonBodyLimitBytes = 64 * 1024;

/** The raw body, or 413 past `limitBytes` (`why` says where the limit comes from). */
export async function readLimitedBody(
  request: IncomingMessage,
  limitBytes: number,
  why = '',
): Promise<Buffer> {
  try {
    return await readBody(request, limitBytes);
  } catch (error) {
    if (error instanceof ButlerError && error.code === 'payload_too_large')
      throw new ApiError(413, 'payload_too_large', `The body may be at most ${limitBytes} bytes${why}.`);
    throw error;
  }
}

export async function readJson(request: IncomingMessage): Promise<unknown> {
  return parseJson(await readLimitedBody(request, jsonBodyLimitBytes));
}

export function parseJson(body: Buffer): unknown {
  if (body.length === 0) return {};
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    throw new ApiError(400, 'invalid_json', 'The body is not valid JSON.');
  }
}

export function sendError(response: ServerResponse, error: ApiError): void {
  if (!response.headersSent)
    for (const [name, value] of Object.entries(error.headers)) response.setHeader(name, value);
  sendJson(response, error.status, { error: error.code, message: error.message });
}

export { sendJson };
