import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A local HTTP endpoint for config-defined tools: records each call and answers as scripted. */

export interface ToolRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}

export interface ToolAnswer {
  status?: number;
  body?: string | Uint8Array;
  delayMs?: number;
  /** More response headers, e.g. a redirect's `location`. */
  headers?: Record<string, string>;
  /** Instead of `body`: this many bytes of `x`, written only as fast as the client reads them. */
  streamBytes?: number;
}

export interface ToolServer {
  url: string;
  requests: ToolRequest[];
  /** How the next answers look (default 200 `{"ok":true}`); with `path`, only for requests to that path. */
  respond(answer: ToolAnswer, path?: string): void;
  /** One per streamed answer: true if it was written to the end, false if the client stopped reading. */
  streams: Array<Promise<boolean>>;
  close(): Promise<void>;
}

const chunk = Buffer.alloc(64 * 1024, 'x');

/**
 * Writes `bytes` of `x` in chunks, waiting for the client to take each, then `end`; true if it got that
 * far, false if the client went away first.
 */
export async function streamBytes(
  response: ServerResponse,
  bytes: number,
  options: { end?: string } = {},
): Promise<boolean> {
  const closed = new Promise<void>((resolve) => response.once('close', () => resolve()));
  for (let sent = 0; sent < bytes; sent += chunk.length) {
    if (response.destroyed) return false;
    if (!response.write(chunk.subarray(0, Math.min(chunk.length, bytes - sent))))
      await Promise.race([new Promise((resolve) => response.once('drain', resolve)), closed]);
  }
  if (response.destroyed) return false;
  response.end(options.end);
  return true;
}

export async function startToolServer(): Promise<ToolServer> {
  const requests: ToolRequest[] = [];
  const streams: Array<Promise<boolean>> = [];
  let answer: ToolAnswer = {};
  const answersByPath = new Map<string, ToolAnswer>();
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const path = request.url ?? '/';
    requests.push({
      method: request.method ?? 'GET',
      path,
      headers: request.headers,
      body: text ? JSON.parse(text) : undefined,
    });
    const current = answersByPath.get(new URL(path, 'http://tool').pathname) ?? answer;
    if (current.delayMs) await new Promise((resolve) => setTimeout(resolve, current.delayMs));
    response.writeHead(current.status ?? 200, { 'content-type': 'application/json', ...current.headers });
    if (current.streamBytes === undefined) response.end(current.body ?? '{"ok":true}');
    else streams.push(streamBytes(response, current.streamBytes));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    streams,
    respond: (next, path) => {
      if (path === undefined) answer = next;
      else answersByPath.set(path, next);
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
