import { afterEach, describe, expect, it } from 'vitest';
import { McpServer, type McpServerSettings, McpToolCallError } from '../../../src/core/tools/mcp/index.js';
import type { Tool } from '../../../src/core/tools/tool.js';
import { startMcpStreamingServer } from '../../helpers/mcp-streaming-server.js';
import {
  recordingLogger,
  startMcpHttpServer,
  testSettings,
  toolContext,
} from '../../helpers/mcp-test-server.js';

/**
 * An MCP server over HTTP cannot make Butler hold an oversized result (issue 21, item 9): past
 * `maxResponseBytes` Butler stops reading, and the call fails at once with the reason.
 */

const cap = 1_048_576;
const cleanups: Array<() => Promise<void>> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function connect(url: string): Promise<McpServer> {
  const settings: McpServerSettings = testSettings(
    'big',
    { kind: 'http', url, headers: {} },
    { maxResponseBytes: cap, timeoutMs: 20_000 },
  );
  const server = new McpServer(settings, recordingLogger().logger, { pingIntervalMs: 0 });
  cleanups.push(() => server.stop());
  await server.start();
  expect(server.status()).toMatchObject({ state: 'connected' });
  return server;
}

function toolOf(server: McpServer, name: string): Tool {
  const found = server.tools().find((candidate) => candidate.name === `big__${name}`);
  if (!found) throw new Error(`no tool ${name}`);
  return found;
}

const tooLarge = `the server's answer was larger than ${cap} bytes (maxResponseBytes); Butler stopped reading it`;

describe('MCP results over HTTP are read up to maxResponseBytes', () => {
  it.each([
    { answers: 'SSE events', jsonResponse: false },
    { answers: 'JSON bodies', jsonResponse: true },
  ])('refuses a 5 MB result from the SDK server answering with $answers, and keeps working', async (mode) => {
    const endpoint = await startMcpHttpServer({ jsonResponse: mode.jsonResponse });
    cleanups.push(() => endpoint.stop());
    const server = await connect(endpoint.url);
    const bigOutput = toolOf(server, 'big_output');

    const started = Date.now();
    const failure = await bigOutput.execute({ chars: 5_000_000 }, toolContext()).catch((error) => error);
    expect(failure).toBeInstanceOf(McpToolCallError);
    expect(failure.message).toContain(tooLarge);
    // The reason arrives with the answer, not after the call's 20 s timeout.
    expect(Date.now() - started).toBeLessThan(15_000);

    await expect(bigOutput.execute({ chars: 200_000 }, toolContext())).resolves.toMatch(/^x{1000}/);
    await expect(toolOf(server, 'lookup').execute({ query: 'q' }, toolContext())).resolves.toBe('found q');
  });

  it.each(['sse', 'json'] as const)('stops reading a streamed %s result at the cap', async (answerAs) => {
    // Far more than the socket buffers hold, so the server can only finish if Butler reads it all.
    const endpoint = await startMcpStreamingServer({ resultBytes: 64 * 1024 * 1024, answerAs });
    cleanups.push(() => endpoint.close());
    const server = await connect(endpoint.url);

    await expect(toolOf(server, 'dump').execute({}, toolContext())).rejects.toThrow(tooLarge);
    expect(await endpoint.streams[0]).toBe(false);
  });
});
