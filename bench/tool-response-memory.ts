import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { McpServer as SdkMcpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { silentLogger } from '../src/core/contracts/logger.js';
import { createHttpTool, type HttpToolDefinition } from '../src/core/tools/http-tool.js';
import { McpServer } from '../src/core/tools/mcp/index.js';
import { outputText, type ToolContext } from '../src/core/tools/tool.js';

/**
 * How much Butler's process grows while one tool call gets an oversized answer: an HTTP tool whose endpoint
 * streams N MB, or an MCP tool over Streamable HTTP (the official SDK server, SSE or JSON answers) whose
 * result is N MB. The endpoint runs in a child process, so only Butler's side is measured: the peak resident
 * memory during the call (VmHWM, reset first) minus the resident memory before it.
 *
 *   node --expose-gc --import tsx bench/tool-response-memory.ts http 300
 *   node --expose-gc --import tsx bench/tool-response-memory.ts mcp 200
 *   node --expose-gc --import tsx bench/tool-response-memory.ts mcp-json 200
 */

type Kind = 'http' | 'mcp' | 'mcp-json';
const chunk = Buffer.alloc(64 * 1024, 'x');

/** Writes `bytes` of `x` in 64 KB chunks, waiting for the socket to drain, until done or the client leaves. */
async function streamBytes(response: ServerResponse, bytes: number): Promise<void> {
  const closed = new Promise((resolve) => response.once('close', resolve));
  for (let sent = 0; sent < bytes && !response.destroyed; sent += chunk.length) {
    if (!response.write(chunk.subarray(0, Math.min(chunk.length, bytes - sent))))
      await Promise.race([once(response, 'drain'), closed]);
  }
  response.end();
}

async function readBody(request: IncomingMessage): Promise<unknown> {
  const parts: Buffer[] = [];
  for await (const part of request) parts.push(part as Buffer);
  const text = Buffer.concat(parts).toString('utf8');
  return text === '' ? undefined : JSON.parse(text);
}

/** The endpoint, in the child process: prints its port on stdout. */
async function serve(kind: Kind, bytes: number): Promise<void> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const mcpServer = () => {
    const server = new SdkMcpServer({ name: 'big', version: '1.0.0' });
    server.registerTool('dump', { annotations: { readOnlyHint: true } }, async () => ({
      content: [{ type: 'text' as const, text: 'x'.repeat(bytes) }],
    }));
    return server;
  };
  const http = createServer(async (request, response) => {
    if (kind === 'http') {
      await readBody(request);
      response.writeHead(200, { 'content-type': 'text/plain' });
      await streamBytes(response, bytes);
      return;
    }
    const body = request.method === 'POST' ? await readBody(request) : undefined;
    const sessionId = request.headers['mcp-session-id'];
    const existing = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
    if (existing) return existing.handleRequest(request, response, body);
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: kind === 'mcp-json',
      onsessioninitialized: (id) => {
        sessions.set(id, transport);
      },
    });
    await mcpServer().connect(transport);
    await transport.handleRequest(request, response, body);
  });
  http.listen(0, '127.0.0.1', () => {
    process.stdout.write(`${(http.address() as AddressInfo).port}\n`);
  });
}

function residentBytes(field: 'VmRSS' | 'VmHWM'): number {
  const status = readFileSync('/proc/self/status', 'utf8');
  return Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024;
}

const context: ToolContext = {
  address: { platform: 'console', workspace: 'local', channel: 'bench', thread: '1' },
  conversationKey: 'console:local:bench:1',
  requester: { id: 'bench' },
  isDirect: false,
  requesters: [{ id: 'bench' }],
  callId: 'call-1',
  signal: new AbortController().signal,
  logger: silentLogger,
};

async function callTool(kind: Kind, url: string): Promise<string> {
  if (kind === 'http') {
    const definition: HttpToolDefinition = {
      name: 'big',
      description: 'Answers a lot.',
      risk: 'low',
      input: { type: 'object', properties: {} },
      http: {
        method: 'GET',
        url,
        headers: {},
        timeoutMs: 120_000,
        maxResponseChars: 4000,
        maxResponseBytes: 1_048_576,
        maxFileBytes: 1_048_576,
        redirects: 'refuse',
      },
    };
    return outputText(await createHttpTool(definition).execute({}, context));
  }
  const server = new McpServer(
    {
      name: 'big',
      transport: { kind: 'http', url: `${url}/mcp`, headers: {} },
      timeoutMs: 120_000,
      connectTimeoutMs: 10_000,
      risk: {},
      trustAnnotations: true,
      maxResultChars: 20_000,
      maxResponseBytes: 1_048_576,
    },
    silentLogger,
    { pingIntervalMs: 0 },
  );
  await server.start();
  const tool = server.tools().find((candidate) => candidate.name === 'big__dump');
  if (!tool) throw new Error(`the MCP server did not connect: ${JSON.stringify(server.status())}`);
  try {
    return outputText(await tool.execute({}, context));
  } catch (error) {
    return `Error: ${(error as Error).message}`;
  } finally {
    await server.stop();
  }
}

async function measure(kind: Kind, megabytes: number): Promise<void> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(import.meta.url), 'serve', kind, String(megabytes)],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  try {
    const port = await new Promise<string>((resolve, reject) => {
      child.stdout.once('data', (data: Buffer) => resolve(data.toString().trim()));
      child.once('exit', (code) => reject(new Error(`the endpoint exited with ${code}`)));
    });
    globalThis.gc?.();
    const before = residentBytes('VmRSS');
    // Resets VmHWM to the current RSS, so the peak below is this call's.
    writeFileSync('/proc/self/clear_refs', '5');
    const started = Date.now();
    const output = await callTool(kind, `http://127.0.0.1:${port}`);
    const peak = residentBytes('VmHWM');
    const megabyte = 1024 * 1024;
    console.log(
      `${kind} ${megabytes} MB: RSS before ${(before / megabyte).toFixed(0)} MB, peak during the call ` +
        `${(peak / megabyte).toFixed(0)} MB (+${((peak - before) / megabyte).toFixed(0)} MB), ` +
        `${Date.now() - started} ms; the model read ${output.length} characters: ` +
        `${JSON.stringify(output.slice(0, 60))}…${JSON.stringify(output.slice(-120))}`,
    );
  } finally {
    child.kill();
  }
}

const [mode, kind, size] = process.argv.slice(2);
if (mode === 'serve') await serve(kind as Kind, Number(size) * 1024 * 1024);
else await measure(mode as Kind, Number(kind ?? 300));
