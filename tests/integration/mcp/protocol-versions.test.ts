import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { McpServer, type McpServerSettings } from '../../../src/core/tools/mcp/index.js';
import { outputText } from '../../../src/core/tools/tool.js';
import { start2026HttpServer, stdio2026Transport } from '../../helpers/mcp-2026-server.js';
import {
  recordingLogger,
  startMcpHttpServer,
  stdioTestTransport,
  testSettings,
  toolContext,
} from '../../helpers/mcp-test-server.js';

/**
 * Butler's MCP client negotiates the protocol revision: the stateless 2026-07-28 with a server written with the
 * v2 server SDK, 2025-11-25 with one written with the 1.x SDK, over stdio and Streamable HTTP alike.
 */

const fast = { reconnect: { initialDelayMs: 50, maxDelayMs: 200 }, pingIntervalMs: 0 };
const servers: McpServer[] = [];

async function connected(settings: McpServerSettings): Promise<McpServer> {
  const server = new McpServer(settings, recordingLogger().logger, fast);
  servers.push(server);
  await server.start();
  return server;
}

async function call(server: McpServer, tool: string, input: Record<string, unknown>): Promise<string> {
  const found = server.tools().find((each) => each.name === `${server.name}__${tool}`);
  if (!found) throw new Error(`no tool ${tool} on ${server.name}`);
  return outputText(await found.execute(input, toolContext()));
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.stop()));
});

describe('a 2026-07-28 server (v2 server SDK)', () => {
  let http: Awaited<ReturnType<typeof start2026HttpServer>>;
  beforeAll(async () => {
    http = await start2026HttpServer();
  });
  afterAll(async () => {
    await http.close();
  });

  it('is spoken to in 2026-07-28 over stdio', async () => {
    const server = await connected(testSettings('modern', stdio2026Transport()));
    expect(server.status()).toMatchObject({
      state: 'connected',
      transport: 'stdio',
      protocolVersion: '2026-07-28',
    });
    expect(await call(server, 'echo', { text: 'hello' })).toBe('echo: hello');
  });

  it('is spoken to in 2026-07-28 over Streamable HTTP', async () => {
    const server = await connected(testSettings('modern', { kind: 'http', url: http.url, headers: {} }));
    expect(server.status()).toMatchObject({
      state: 'connected',
      transport: 'streamable-http',
      protocolVersion: '2026-07-28',
    });
    expect(await call(server, 'echo', { text: 'over http' })).toBe('echo: over http');
  });
});

describe('a 2025-11-25 server (1.x SDK)', () => {
  it('is spoken to in 2025-11-25 over stdio', async () => {
    const server = await connected(testSettings('legacy', stdioTestTransport('/dev/null')));
    expect(server.status()).toMatchObject({
      state: 'connected',
      transport: 'stdio',
      protocolVersion: '2025-11-25',
    });
    const pid = Number(await call(server, 'pid', {}));
    expect(pid).toBeGreaterThan(0);
  });

  it('is spoken to in 2025-11-25 over Streamable HTTP', async () => {
    const endpoint = await startMcpHttpServer();
    try {
      const server = await connected(
        testSettings('legacy', { kind: 'http', url: endpoint.url, headers: {} }),
      );
      expect(server.status()).toMatchObject({
        state: 'connected',
        transport: 'streamable-http',
        protocolVersion: '2025-11-25',
      });
    } finally {
      await endpoint.stop();
    }
  });
});
