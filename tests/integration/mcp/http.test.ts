import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  McpServer,
  type McpServerOptions,
  type McpServerSettings,
} from '../../../src/core/tools/mcp/index.js';
import type { Tool } from '../../../src/core/tools/tool.js';
import {
  type McpHttpTestServer,
  recordingLogger,
  startMcpHttpServer,
  testSettings,
  toolContext,
} from '../../helpers/mcp-test-server.js';
import { waitFor } from '../../helpers/wait-for.js';

/** What only a network server can show: headers, drops, restarts, old servers and silent ones. */

const fast: McpServerOptions = { reconnect: { initialDelayMs: 50, maxDelayMs: 200 }, pingIntervalMs: 0 };
const cleanups: Array<() => Promise<void>> = [];

async function httpServer(options: { legacySse?: boolean } = {}): Promise<McpHttpTestServer> {
  const server = await startMcpHttpServer(options);
  cleanups.push(() => server.stop());
  return server;
}

function supervise(settings: McpServerSettings, options: McpServerOptions = fast): McpServer {
  const server = new McpServer(settings, recordingLogger().logger, options);
  cleanups.push(() => server.stop());
  return server;
}

function http(url: string, headers: Record<string, string> = {}): McpServerSettings['transport'] {
  return { kind: 'http', url, headers };
}

function toolOf(server: McpServer, name: string): Tool {
  const found = server.tools().find((candidate) => candidate.name === `${server.name}__${name}`);
  if (!found) throw new Error(`no tool ${name}`);
  return found;
}

afterEach(async () => {
  // Supervisors first, then the servers they talk to.
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('McpServer over HTTP', () => {
  it('sends the configured headers on every request', async () => {
    const endpoint = await httpServer();
    const server = supervise(
      testSettings('auth', http(endpoint.url, { Authorization: 'Bearer team-token' })),
    );
    await server.start();
    await toolOf(server, 'lookup').execute({ query: 'q' }, toolContext());
    expect(endpoint.requestHeaders.length).toBeGreaterThan(2);
    expect(endpoint.requestHeaders.every((headers) => headers.authorization === 'Bearer team-token')).toBe(
      true,
    );
  });

  it('starts down without blocking when the server is unreachable, then connects when it comes up', async () => {
    const endpoint = await httpServer();
    await endpoint.stop();
    const server = supervise(testSettings('late', http(endpoint.url)));
    const started = Date.now();
    await server.start();
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(server.status()).toMatchObject({ state: 'down', tools: 0 });
    expect(server.status().error).toBeTruthy();

    await endpoint.start();
    await waitFor(() => server.status().state === 'connected');
    await expect(toolOf(server, 'lookup').execute({ query: 'up' }, toolContext())).resolves.toBe('found up');
  });

  it('notices a server that goes away, leaves its tools out, and reconnects when it is back', async () => {
    const endpoint = await httpServer();
    const server = supervise(testSettings('flaky', http(endpoint.url)));
    const changes: number[] = [];
    server.onToolsChanged((tools) => changes.push(tools.length));
    await server.start();
    const lookup = toolOf(server, 'lookup');
    expect(changes).toEqual([server.tools().length]);

    await endpoint.stop();
    await waitFor(() => server.status().state !== 'connected');
    expect(server.tools()).toEqual([]);
    expect(changes.at(-1)).toBe(0);

    await endpoint.start();
    await waitFor(() => server.status().state === 'connected');
    expect(changes.at(-1)).toBeGreaterThan(0);
    // A tool object kept from before the drop calls through the new session.
    await expect(lookup.execute({ query: 'again' }, toolContext())).resolves.toBe('found again');
  });

  it('refuses a call while the server is down, saying the tool did not run', async () => {
    const endpoint = await httpServer();
    const server = supervise(testSettings('gone', http(endpoint.url)), {
      reconnect: { initialDelayMs: 60_000, maxDelayMs: 60_000 },
      pingIntervalMs: 0,
    });
    await server.start();
    const record = toolOf(server, 'record');
    await endpoint.stop();
    await waitFor(() => server.status().state === 'down');
    await expect(record.execute({ label: 'while-down' }, toolContext())).rejects.toMatchObject({
      code: 'mcp_server_unavailable',
      message: /not available .*did not run/,
    });
    expect(endpoint.calls.filter((call) => call.tool === 'record')).toEqual([]);
  });

  it('finds a drop by pinging when no stream reports it', async () => {
    const endpoint = await httpServer();
    const server = supervise(testSettings('pinged', http(endpoint.url)), { ...fast, pingIntervalMs: 100 });
    await server.start();
    await endpoint.stop();
    await waitFor(() => server.status().state !== 'connected');
    await endpoint.start();
    await waitFor(() => server.status().state === 'connected');
  });

  it('waits for a connection in progress before calling, as right after a restart', async () => {
    const endpoint = await httpServer();
    const server = supervise(testSettings('restarted', http(endpoint.url)));
    const starting = server.start();
    expect(server.status().state).toBe('connecting');
    await server.whenSettled();
    expect(server.status().state).toBe('connected');
    await starting;
    await expect(server.start()).resolves.toBeUndefined();
  });

  it('tells listeners about tools added on the server side', async () => {
    const endpoint = await httpServer();
    const server = supervise(testSettings('live', http(endpoint.url, {}), { include: ['lookup', 'new_*'] }));
    await server.start();
    const seen: string[][] = [];
    server.onToolsChanged((tools) => seen.push(tools.map((tool) => tool.name)));
    endpoint.addTool('new_report');
    endpoint.addTool('ignored_tool');
    await waitFor(() => seen.at(-1)?.includes('live__new_report'));
    expect(server.tools().map((tool) => tool.name)).toEqual(['live__lookup', 'live__new_report']);
  });

  it('falls back to the old HTTP+SSE transport for a server that only speaks it', async () => {
    const endpoint = await httpServer({ legacySse: true });
    const server = supervise(testSettings('legacy', http(endpoint.url)));
    await server.start();
    expect(server.status()).toMatchObject({ state: 'connected', transport: 'sse' });
    await expect(toolOf(server, 'lookup').execute({ query: 'old' }, toolContext())).resolves.toBe(
      'found old',
    );
  });

  it('gives up on a server that never answers after the connect timeout', async () => {
    const silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    cleanups.push(async () => {
      silent.closeAllConnections();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    });
    const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/mcp`;
    const server = supervise(testSettings('silent', http(url), { connectTimeoutMs: 300 }));
    const started = Date.now();
    await server.start();
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(server.status()).toMatchObject({ state: 'down', error: 'no answer within 300 ms' });
  });
});
