import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { McpServer as SdkMcpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { McpServerSettings } from '../../src/core/tools/mcp/index.js';
import { repositoryRoot, tsxLoader } from './entry-points.js';
import { type Call2025, createQuestioning2025Server } from './mcp-2025-questions.js';
import { answer, readBody } from './mcp-test-server.js';

export type { Call2025 } from './mcp-2025-questions.js';

/**
 * The questioning 2025-11-25 server (`mcp-2025-questions.ts`) over Streamable HTTP with sessions, one SDK server
 * per session as the 1.x SDK requires, or as a stdio child. Like any 1.x server it answers the 2026 client's
 * `server/discover` probe (a POST without a session that is not `initialize`) with 400 and a JSON-RPC error.
 */

const stdioEntry = fileURLToPath(new URL('./mcp-2025-questions-stdio.ts', import.meta.url));

/** The stdio transport that runs the server as a child through tsx, appending each call to `callLog`. */
export function stdio2025QuestionsTransport(callLog: string): McpServerSettings['transport'] {
  return {
    kind: 'stdio',
    command: process.execPath,
    args: ['--import', tsxLoader, stdioEntry],
    env: { MCP_TEST_CALL_LOG: callLog },
    cwd: repositoryRoot,
  };
}

/** The server over HTTP in the test process; `sessions()` counts the sessions open now. */
export async function start2025QuestionsHttpServer(): Promise<{
  url: string;
  calls: Call2025[];
  sessions(): number;
  close(): Promise<void>;
}> {
  const calls: Call2025[] = [];
  const sessions = new Map<string, { server: SdkMcpServer; transport: StreamableHTTPServerTransport }>();

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const body = request.method === 'POST' ? await readBody(request) : undefined;
    const sessionId = request.headers['mcp-session-id'];
    const session = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
    if (session) {
      await session.transport.handleRequest(request, response, body);
    } else if (sessionId === undefined && request.method === 'POST' && isInitializeRequest(body)) {
      const server = createQuestioning2025Server((call) => calls.push(call));
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          sessions.set(id, { server, transport });
        },
        onsessionclosed: (id) => {
          sessions.delete(id);
        },
      });
      await server.connect(transport);
      await transport.handleRequest(request, response, body);
    } else {
      answer(
        response,
        sessionId === undefined ? 400 : 404,
        sessionId === undefined ? 'Bad Request: No valid session ID provided' : 'no such session',
      );
    }
  }

  const http = createServer((request, response) => {
    if (new URL(request.url ?? '/', 'http://localhost').pathname !== '/mcp') {
      answer(response, 404, 'not found');
      return;
    }
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) answer(response, 500, String(error));
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    calls,
    sessions: () => sessions.size,
    async close() {
      const open = [...sessions.values()];
      sessions.clear();
      await Promise.all(
        open.map(async ({ server, transport }) => {
          await transport.close().catch(() => {});
          await server.close().catch(() => {});
        }),
      );
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
