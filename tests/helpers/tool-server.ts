import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A local HTTP endpoint for config-defined tools: records each call and answers as scripted. */

export interface ToolRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}

export interface ToolServer {
  url: string;
  requests: ToolRequest[];
  /** Status, body and delay of the next answers (default 200 `{"ok":true}`). */
  respond(answer: { status?: number; body?: string; delayMs?: number }): void;
  close(): Promise<void>;
}

export async function startToolServer(): Promise<ToolServer> {
  const requests: ToolRequest[] = [];
  let answer: { status?: number; body?: string; delayMs?: number } = {};
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    requests.push({
      method: request.method ?? 'GET',
      path: request.url ?? '/',
      headers: request.headers,
      body: text ? JSON.parse(text) : undefined,
    });
    if (answer.delayMs) await new Promise((resolve) => setTimeout(resolve, answer.delayMs));
    response.writeHead(answer.status ?? 200, { 'content-type': 'application/json' });
    response.end(answer.body ?? '{"ok":true}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    respond: (next) => {
      answer = next;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
