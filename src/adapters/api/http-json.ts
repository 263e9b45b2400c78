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

const bodyLimitBytes = 64 * 1024;

export async function readJson(request: IncomingMessage): Promise<unknown> {
  let body: Buffer;
  try {
    body = await readBody(request, bodyLimitBytes);
  } catch (error) {
    if (error instanceof ButlerError && error.code === 'payload_too_large')
      throw new ApiError(413, 'payload_too_large', `The body may be at most ${bodyLimitBytes} bytes.`);
    throw error;
  }
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
