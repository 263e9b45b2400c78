import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { McpServer as SdkMcpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { type LogFunction, type Logger, silentLogger } from '../../src/core/contracts/logger.js';
import type { McpServerSettings } from '../../src/core/tools/mcp/index.js';
import type { ToolContext } from '../../src/core/tools/tool.js';
import { repositoryRoot, tsxLoader } from './entry-points.js';
import {
  type CallRecord,
  createTestMcpServer,
  registerDynamicTool,
  type TestToolOptions,
} from './mcp-test-tools.js';

export type { CallRecord } from './mcp-test-tools.js';

const stdioEntry = fileURLToPath(new URL('./mcp-test-server-stdio.ts', import.meta.url));

/** Settings for an McpServer, with short timeouts that suit tests. */
export function testSettings(
  name: string,
  transport: McpServerSettings['transport'],
  overrides: Partial<McpServerSettings> = {},
): McpServerSettings {
  return {
    name,
    transport,
    timeoutMs: 5_000,
    connectTimeoutMs: 15_000,
    risk: {},
    trustAnnotations: true,
    maxResultChars: 20_000,
    maxResponseBytes: 1_048_576,
    ...overrides,
  };
}

/**
 * The stdio transport that runs the test server as a child through tsx, recording calls to `callLog`. It starts
 * in the repository (where tsx finds the tsconfig) unless `cwd` says otherwise; `null` leaves it unset.
 */
export function stdioTestTransport(
  callLog: string,
  env: Record<string, string> = {},
  cwd: string | null = repositoryRoot,
): McpServerSettings['transport'] {
  return {
    kind: 'stdio',
    command: process.execPath,
    args: ['--import', tsxLoader, stdioEntry],
    env: { MCP_TEST_CALL_LOG: callLog, ...env },
    ...(cwd === null ? {} : { cwd }),
  };
}

/** The calls a stdio child recorded, in order. */
export function readCallLog(path: string): CallRecord[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as CallRecord);
}

export interface McpHttpTestServer {
  /** The MCP endpoint: Streamable HTTP, or the old HTTP+SSE transport with `legacySse`. */
  url: string;
  calls: CallRecord[];
  /** The headers of every HTTP request received. */
  requestHeaders: IncomingHttpHeaders[];
  /** Adds a tool to every session (and to later ones); each connected client gets `list_changed`. */
  addTool(name: string): void;
  /** Closes every session and connection and stops listening; `start()` listens again on the same port. */
  stop(): Promise<void>;
  start(): Promise<void>;
}

/** A request's JSON body (undefined when empty). */
export async function readBody(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text === '' ? undefined : JSON.parse(text);
}

/** A JSON-RPC error without an id, as the SDK's examples answer requests outside any session. */
export function answer(response: ServerResponse, status: number, message: string): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

/** The test server over HTTP in the test process, one SDK server per session as the SDK requires. */
export async function startMcpHttpServer(
  options: {
    legacySse?: boolean /** Answer requests with JSON bodies instead of SSE streams. */;
    jsonResponse?: boolean;
  } = {},
): Promise<McpHttpTestServer> {
  const calls: CallRecord[] = [];
  const requestHeaders: IncomingHttpHeaders[] = [];
  const dynamicTools = new Set<string>();
  const sessions = new Map<
    string,
    { server: SdkMcpServer; transport: StreamableHTTPServerTransport | SSEServerTransport }
  >();
  const toolOptions: TestToolOptions = {
    record: (call) => calls.push(call),
    addTool: (name) => {
      dynamicTools.add(name);
      for (const { server } of sessions.values()) registerDynamicTool(server, name, toolOptions);
    },
  };
  const newServer = () => createTestMcpServer(toolOptions, dynamicTools);

  async function streamable(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const body = request.method === 'POST' ? await readBody(request) : undefined;
    const sessionId = request.headers['mcp-session-id'];
    const session = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
    if (session?.transport instanceof StreamableHTTPServerTransport) {
      await session.transport.handleRequest(request, response, body);
    } else if (sessionId === undefined && request.method === 'POST' && isInitializeRequest(body)) {
      const server = newServer();
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: options.jsonResponse ?? false,
        onsessioninitialized: (id) => {
          sessions.set(id, { server, transport });
        },
      });
      await server.connect(transport);
      await transport.handleRequest(request, response, body);
    } else {
      answer(response, sessionId === undefined ? 400 : 404, 'no such session');
    }
  }

  async function legacy(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://localhost');
    if (request.method === 'GET' && url.pathname === '/mcp') {
      const server = newServer();
      const transport = new SSEServerTransport('/messages', response);
      sessions.set(transport.sessionId, { server, transport });
      await server.connect(transport);
      return;
    }
    const session = sessions.get(url.searchParams.get('sessionId') ?? '');
    if (
      request.method === 'POST' &&
      url.pathname === '/messages' &&
      session?.transport instanceof SSEServerTransport
    ) {
      await session.transport.handlePostMessage(request, response, await readBody(request));
      return;
    }
    // What an SSE-only server says to a Streamable HTTP POST: the client then falls back to SSE.
    answer(response, 405, 'method not allowed');
  }

  const http = createServer((request, response) => {
    requestHeaders.push(request.headers);
    const handle = options.legacySse ? legacy : streamable;
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) answer(response, 500, String(error));
    });
  });
  let port = 0;
  const start = () =>
    new Promise<void>((resolve) =>
      http.listen(port, '127.0.0.1', () => {
        port = (http.address() as AddressInfo).port;
        resolve();
      }),
    );
  await start();
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    calls,
    requestHeaders,
    addTool: toolOptions.addTool,
    start,
    async stop() {
      const open = [...sessions.values()];
      sessions.clear();
      await Promise.all(open.map(({ server }) => server.close().catch(() => {})));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

export interface LogEntry {
  level: 'error' | 'warn' | 'info' | 'debug';
  fields: Record<string, unknown>;
  message: string | undefined;
}

/** A Logger that keeps every entry (with its child bindings), for asserting on what was logged. */
export function recordingLogger(): { logger: Logger; entries: LogEntry[] } {
  const entries: LogEntry[] = [];
  const make = (bindings: Record<string, unknown>): Logger => {
    const at =
      (level: LogEntry['level']): LogFunction =>
      (first: string | Record<string, unknown>, message?: string) => {
        if (typeof first === 'string') entries.push({ level, fields: { ...bindings }, message: first });
        else entries.push({ level, fields: { ...bindings, ...first }, message });
      };
    return {
      error: at('error'),
      warn: at('warn'),
      info: at('info'),
      debug: at('debug'),
      child: (more) => make({ ...bindings, ...more }),
    };
  };
  return { logger: make({}), entries };
}

/** What the core passes to `execute`, for a call made outside a turn. */
export function toolContext(
  signal: AbortSignal = new AbortController().signal,
  callId = 'call-1',
): ToolContext {
  return {
    address: { platform: 'slack', workspace: 'T1', channel: 'C1', thread: '1.0' },
    conversationKey: 'slack:T1:C1:1.0',
    requester: { id: 'U1' },
    requesters: [{ id: 'U1' }],
    isDirect: false,
    callId,
    signal,
    logger: silentLogger,
  };
}
