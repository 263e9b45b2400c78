import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpServer, type McpServerSettings, McpToolCallError } from '../../../src/core/tools/mcp/index.js';
import { outputText, type Tool } from '../../../src/core/tools/tool.js';
import {
  type CallRecord,
  readCallLog,
  recordingLogger,
  startMcpHttpServer,
  stdioTestTransport,
  testSettings,
  toolContext,
} from '../../helpers/mcp-test-server.js';
import { testImageBytes } from '../../helpers/mcp-test-tools.js';
import { waitFor } from '../../helpers/wait-for.js';

/** The same behaviour over both transports: the test server as a stdio child, and over Streamable HTTP. */

interface Endpoint {
  transport: McpServerSettings['transport'];
  calls(): CallRecord[];
  close(): Promise<void>;
}

const endpoints: Record<'stdio' | 'http', () => Promise<Endpoint>> = {
  async stdio() {
    const directory = mkdtempSync(join(tmpdir(), 'butler-mcp-'));
    const callLog = join(directory, 'calls.jsonl');
    return {
      transport: stdioTestTransport(callLog),
      calls: () => readCallLog(callLog),
      close: async () => rmSync(directory, { recursive: true, force: true }),
    };
  },
  async http() {
    const server = await startMcpHttpServer();
    return {
      transport: { kind: 'http', url: server.url, headers: {} },
      calls: () => server.calls,
      close: () => server.stop(),
    };
  },
};

const fast = { reconnect: { initialDelayMs: 50, maxDelayMs: 200 }, pingIntervalMs: 0 };

describe.each(['stdio', 'http'] as const)('McpServer over %s', (kind) => {
  let endpoint: Endpoint;
  let server: McpServer;
  const extraServers: McpServer[] = [];
  const tool = (name: string): Tool => {
    const found = server.tools().find((candidate) => candidate.name === `test__${name}`);
    if (!found) throw new Error(`no tool test__${name}`);
    return found;
  };
  const run = (name: string, input: unknown, signal?: AbortSignal) =>
    tool(name).execute(input, toolContext(signal)).then(outputText);

  beforeAll(async () => {
    endpoint = await endpoints[kind]();
    server = new McpServer(
      testSettings('test', endpoint.transport, { timeoutMs: 600, maxResultChars: 2_000 }),
      recordingLogger().logger,
      fast,
    );
    await server.start();
  });

  afterAll(async () => {
    await Promise.all([server, ...extraServers].map((each) => each.stop()));
    await endpoint.close();
  });

  it('connects and offers the tools with model-safe names, risks from annotations and their origin', () => {
    expect(server.status()).toMatchObject({
      state: 'connected',
      transport: kind === 'stdio' ? 'stdio' : 'streamable-http',
    });
    expect(server.status().error).toBeUndefined();
    const risks = Object.fromEntries(server.tools().map((each) => [each.name, each.risk]));
    expect(risks).toMatchObject({
      test__lookup: 'low',
      test__update_record: 'medium',
      test__plain: 'high',
      test__delete_record: 'high',
    });
    expect(server.status().tools).toBe(server.tools().length);
    const lookup = tool('lookup');
    expect(lookup.origin).toEqual({ kind: 'mcp', server: 'test', tool: 'lookup' });
    expect(lookup.description).toBe('Looks a record up.');
    expect(tool('update_record').description).toBe('Update a record');
    expect(lookup.parameters).toMatchObject({ type: 'object', properties: { query: { type: 'string' } } });
    expect(lookup.parameters).not.toHaveProperty('$schema');
  });

  it('applies risk overrides, the include filter and distrust of annotations', async () => {
    const filtered = new McpServer(
      testSettings('picky', endpoint.transport, {
        include: ['lookup', '*_record'],
        risk: { delete_record: 'medium' },
        trustAnnotations: false,
      }),
      recordingLogger().logger,
      fast,
    );
    extraServers.push(filtered);
    await filtered.start();
    const risks = Object.fromEntries(filtered.tools().map((each) => [each.name, each.risk]));
    expect(risks).toEqual({
      picky__lookup: 'high',
      picky__update_record: 'high',
      picky__delete_record: 'medium',
    });
  });

  it('validates arguments against the input schema and summarizes them for the card', () => {
    const createIssue = tool('create_issue');
    const missing = createIssue.parse({ repo: 'acme/api' });
    expect(missing.ok).toBe(false);
    const parsed = createIssue.parse({ repo: 'acme/api', title: 'Fix login' });
    expect(parsed).toEqual({ ok: true, value: { repo: 'acme/api', title: 'Fix login' } });
    expect(parsed.ok && createIssue.summarize(parsed.value)).toBe(
      'test: create_issue(repo=acme/api, title="Fix login")',
    );
  });

  it('runs a call exactly once by its MCP name and returns its text', async () => {
    const label = `once-${kind}`;
    await expect(run('record', { label })).resolves.toBe(`recorded ${label}`);
    const runs = endpoint.calls().filter((call) => call.tool === 'record' && call.arguments.label === label);
    expect(runs).toHaveLength(1);
    await expect(run('create_issue', { repo: 'acme/api', title: 'Fix login' })).resolves.toBe(
      '{"repo":"acme/api","title":"Fix login"}',
    );
  });

  it('formats structured and image results', async () => {
    await expect(run('structured', { city: 'Oslo' })).resolves.toBe('{"city":"Oslo","temperature":21.5}');
    await expect(run('structured_summary', {})).resolves.toBe('three items\n{"count":3}');
    await expect(run('image', {})).resolves.toBe('[image: image/png, 12 KB]');
  });

  it('hands an image result over as a file for the conversation, whole', async () => {
    const output = await tool('image').execute({}, toolContext());
    if (typeof output === 'string' || !('files' in output))
      throw new Error(`expected a file, got text: ${JSON.stringify(output)}`);
    expect(output.text).toBe('[image: image/png, 12 KB]');
    expect(output.files.map((file) => [file.name, file.mimeType, file.bytes.byteLength])).toEqual([
      ['image-1.png', 'image/png', testImageBytes],
    ]);
  });

  it('turns isError results and thrown handlers into tool errors with the text', async () => {
    const failed = run('fail', {});
    await expect(failed).rejects.toBeInstanceOf(McpToolCallError);
    await expect(failed).rejects.toMatchObject({ code: 'mcp_tool_failed', message: 'the record is locked' });
    await expect(run('throw', {})).rejects.toMatchObject({ code: 'mcp_tool_failed', message: /kaboom/ });
  });

  it('truncates an oversized result with a marker', async () => {
    const text = await run('big_output', { chars: 50_000 });
    expect(text.length).toBeLessThanOrEqual(2_000);
    expect(text).toMatch(/\[truncated: \d+ of 50000 characters cut\]$/);
  });

  it('times out a call after the server timeout and tells the server to cancel it', async () => {
    const started = Date.now();
    await expect(run('slow', { ms: 10_000 })).rejects.toMatchObject({ code: 'mcp_tool_timeout' });
    expect(Date.now() - started).toBeLessThan(3_000);
    await waitFor(() => endpoint.calls().some((call) => call.tool === 'slow' && call.event === 'cancelled'));
  });

  it('cancels a call when the turn is aborted', async () => {
    const controller = new AbortController();
    const call = run('slow', { ms: 9_000 }, controller.signal);
    await waitFor(() => endpoint.calls().some((each) => each.tool === 'slow' && each.arguments.ms === 9_000));
    controller.abort();
    await expect(call).rejects.toMatchObject({ code: 'mcp_tool_cancelled' });
    await waitFor(() =>
      endpoint.calls().some((each) => each.event === 'cancelled' && each.arguments.ms === 9_000),
    );
    await expect(run('lookup', { query: 'after' }, AbortSignal.abort())).rejects.toMatchObject({
      code: 'mcp_tool_cancelled',
    });
    expect(endpoint.calls().some((each) => each.arguments.query === 'after')).toBe(false);
  });

  it('refreshes the list on tools/list_changed and tells listeners', async () => {
    const seen: string[][] = [];
    const unsubscribe = server.onToolsChanged((tools) => seen.push(tools.map((each) => each.name)));
    await run('add_tool', { name: `fresh_${kind}` });
    const names = await waitFor(() => seen.find((list) => list.includes(`test__fresh_${kind}`)));
    expect(names).toContain('test__lookup');
    await expect(run(`fresh_${kind}`, {})).resolves.toBe(`dynamic fresh_${kind}`);
    expect(tool(`fresh_${kind}`).risk).toBe('low');
    unsubscribe();
  });
});
