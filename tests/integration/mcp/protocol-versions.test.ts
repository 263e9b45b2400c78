import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { InputNeededError } from '../../../src/core/contracts/input-needed.js';
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

  it('hands back a question the server asks mid-call, and goes on with the answers and its state untouched', async () => {
    const server = await connected(testSettings('modern', { kind: 'http', url: http.url, headers: {} }));
    const ship = server.tools().find((each) => each.name === 'modern__ship');
    if (!ship) throw new Error('no ship tool');
    const asked = await ship.execute({ item: 'mug' }, toolContext()).catch((error: unknown) => error);
    expect(asked).toBeInstanceOf(InputNeededError);
    const { requests, requestState } = asked as InputNeededError;
    expect(requestState).toBe('ship:mug');
    expect(requests).toEqual([
      expect.objectContaining({ key: 'shipping', mode: 'form', message: 'Where should the mug go?' }),
    ]);
    const content = { address: '1 Main St', speed: 'express' };
    const answer = {
      responses: { shipping: { action: 'accept' as const, content } },
      requestState: 'ship:mug',
    };
    const done = await ship.execute({ item: 'mug' }, { ...toolContext(), answer });
    expect(outputText(done)).toBe(`Shipped mug: ${JSON.stringify(content)}`);
    expect(http.calls.at(-1)).toEqual({
      tool: 'ship',
      args: { item: 'mug' },
      inputResponses: { shipping: { action: 'accept', content } },
      requestState: 'ship:mug',
    });
  });

  it('keeps a 2026-07-28 connection through its health checks (the revision has no ping)', async () => {
    const log = recordingLogger();
    const server = new McpServer(
      testSettings('modern', { kind: 'http', url: http.url, headers: {} }),
      log.logger,
      {
        ...fast,
        pingIntervalMs: 50,
      },
    );
    servers.push(server);
    await server.start();
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(server.status()).toMatchObject({ state: 'connected', protocolVersion: '2026-07-28' });
    expect(log.entries.filter((entry) => entry.level !== 'debug' && entry.level !== 'info')).toEqual([]);
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
