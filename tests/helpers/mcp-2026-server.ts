import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { createMcpHandler } from '@modelcontextprotocol/server';
import type { McpServerSettings } from '../../src/core/tools/mcp/index.js';
import { repositoryRoot, tsxLoader } from './entry-points.js';
import { type Call2026, create2026McpServer } from './mcp-2026-tools.js';

const stdioEntry = fileURLToPath(new URL('./mcp-2026-server-stdio.ts', import.meta.url));

/** The stdio transport that runs the v2 SDK's test server as a child through tsx. */
export function stdio2026Transport(): McpServerSettings['transport'] {
  return {
    kind: 'stdio',
    command: process.execPath,
    args: ['--import', tsxLoader, stdioEntry],
    env: {},
    cwd: repositoryRoot,
  };
}

async function toRequest(request: IncomingMessage, origin: string): Promise<Request> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers))
    for (const each of Array.isArray(value) ? value : value === undefined ? [] : [value])
      headers.append(name, each);
  const method = request.method ?? 'GET';
  const body = method === 'GET' || method === 'HEAD' ? null : Buffer.concat(chunks);
  return new Request(new URL(request.url ?? '/', origin), { method, headers, body });
}

async function send(response: Response, to: ServerResponse): Promise<void> {
  to.writeHead(response.status, Object.fromEntries(response.headers));
  if (response.body) for await (const chunk of response.body) to.write(chunk);
  to.end();
}

/** The v2 SDK's test server over Streamable HTTP (its web-standard handler behind node:http), on a free port. */
export async function start2026HttpServer(): Promise<{
  url: string;
  calls: Call2026[];
  close(): Promise<void>;
}> {
  const calls: Call2026[] = [];
  const handler = createMcpHandler(() => create2026McpServer((call) => calls.push(call)));
  let origin = '';
  const http = createServer((request, response) => {
    toRequest(request, origin)
      .then((webRequest) => handler.fetch(webRequest))
      .then((webResponse) => send(webResponse, response))
      .catch(() => {
        if (!response.headersSent) response.writeHead(500);
        response.end();
      });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  return {
    url: `${origin}/mcp`,
    calls,
    async close() {
      await handler.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
