import { afterAll, beforeAll, beforeEach } from 'vitest';

/**
 * A test file's MCP server that Butler knows as `shop`, its `ship` at low risk (no approval before the call):
 * started before the file's Butler and closed after it, the calls it recorded cleared before each test. `config`
 * holds Butler's `mcpServers` entry for it, read when Butler starts, and `extra` beside it.
 */
export function useShopServer<Server extends { url: string; calls: unknown[]; close(): Promise<void> }>(
  start: () => Promise<Server>,
  extra: Record<string, unknown> = {},
) {
  let server: Server | undefined;
  beforeAll(async () => {
    server = await start();
  });
  afterAll(async () => {
    await server?.close();
  });
  beforeEach(() => {
    if (server) server.calls.length = 0;
  });
  const running = () => {
    if (!server) throw new Error('the shop server has not started');
    return server;
  };
  return {
    get server() {
      return running();
    },
    config: {
      ...extra,
      get mcpServers() {
        return [{ name: 'shop', url: running().url, tools: { risk: { ship: 'low' } } }];
      },
    },
  };
}
