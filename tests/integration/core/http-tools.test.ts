import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { auditLog } from '../../../src/storage/schema.js';
import { startTestButler, type TestButler } from '../../helpers/butler-app.js';
import { databaseKind } from '../../helpers/database.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { inboundMessage } from '../../helpers/messages.js';
import { RecordingAdapter } from '../../helpers/recording-adapter.js';
import { startToolServer, type ToolServer } from '../../helpers/tool-server.js';

/**
 * An HTTP tool sends only what the admin allowed (issue 21, item 9): declared properties only, never over a
 * query parameter fixed in the config, no redirects unless allowed, and no more of the answer than the cap.
 * Every call goes through the real turn: the fake model asks for it, Butler checks and runs it against a
 * real HTTP server, and the model reads the result.
 */

let model: FakeModelServer;
/** The endpoint the tools are configured with. */
let endpoint: ToolServer;
/** Another origin a hostile endpoint might redirect to. */
let elsewhere: ToolServer;
let platform: RecordingAdapter;
let app: TestButler;
let turn = 0;

const authorization = 'Bearer ops-secret';

function tools() {
  const http = (method: string, path: string, more: Record<string, unknown> = {}) => ({
    method,
    url: `${endpoint.url}${path}`,
    headers: { authorization },
    ...more,
  });
  const input = (properties: Record<string, unknown>) => ({ type: 'object', properties });
  return [
    {
      name: 'service_status',
      description: 'Status of a service.',
      risk: 'low',
      input: input({ service: { type: 'string' }, scope: { type: 'string' } }),
      http: http('GET', '/status?scope=read&format=json'),
    },
    {
      name: 'open_ticket',
      description: 'Opens a ticket.',
      risk: 'low',
      input: input({ title: { type: 'string' } }),
      http: http('POST', '/tickets'),
    },
    {
      name: 'fetch_report',
      description: 'Fetches the daily report.',
      risk: 'low',
      input: input({ day: { type: 'string' } }),
      http: http('GET', '/report'),
    },
    {
      name: 'save_report',
      description: 'Saves a report.',
      risk: 'low',
      input: input({ text: { type: 'string' } }),
      http: http('POST', '/save', { redirects: 'same-origin' }),
    },
    {
      name: 'export_logs',
      description: 'Exports the logs.',
      risk: 'low',
      input: input({}),
      http: http('GET', '/logs', { maxResponseChars: 200 }),
    },
  ];
}

beforeAll(async () => {
  model = await startFakeModelServer();
  endpoint = await startToolServer();
  elsewhere = await startToolServer();
  platform = new RecordingAdapter();
  app = await startTestButler({
    env: { BUTLER_BASE_URL: model.baseUrl, BUTLER_MODEL: 'test-model' },
    config: { tools: tools() },
    adapters: [platform],
  });
});
afterAll(async () => {
  await app.close();
  await model.close();
  await endpoint.close();
  await elsewhere.close();
});
beforeEach(() => {
  model.reset();
  endpoint.requests.length = 0;
  elsewhere.requests.length = 0;
});

/** One turn in which the model calls `tool` with `rawArguments` (JSON text); returns what the model read. */
async function call(tool: string, rawArguments: string): Promise<{ result: string; callId: string }> {
  turn += 1;
  const callId = `call_${turn}`;
  model.enqueue({ toolCalls: [{ id: callId, name: tool, arguments: rawArguments }] }, { text: 'done' });
  const address = { platform: 'console', workspace: 'local', channel: 'ops', thread: `t${turn}` } as const;
  await app.butler.service.accept(inboundMessage({ text: 'please', address, isDirect: false }));
  await app.settle();
  const message = model.requests[1]?.messages.find((entry) => entry.role === 'tool');
  return { result: String(message?.content ?? ''), callId };
}

async function auditRow(callId: string) {
  const [row] = await app.butler.database.db.select().from(auditLog).where(eq(auditLog.toolCallId, callId));
  return row;
}

describe(`HTTP tools send only what the admin allowed, on ${databaseKind}`, () => {
  // What a model steered by a prompt injection might send: each carries a property the schema never declared.
  const undeclared = [
    { tool: 'service_status', arguments: '{"service":"api","api_key":"attacker-key"}', named: 'api_key' },
    { tool: 'service_status', arguments: '{"service":"api","Scope":"admin"}', named: 'Scope' },
    { tool: 'service_status', arguments: '{"service":"api","format":"csv"}', named: 'format' },
    {
      tool: 'open_ticket',
      arguments: '{"title":"Printer","assignee":"root","isAdmin":true}',
      named: 'assignee',
    },
    {
      tool: 'open_ticket',
      arguments: '{"title":"Printer","__proto__":{"isAdmin":true}}',
      named: '__proto__',
    },
  ];

  it.each(undeclared)('refuses $tool with $arguments before sending anything', async (attack) => {
    const { result, callId } = await call(attack.tool, attack.arguments);
    expect(endpoint.requests).toEqual([]);
    expect(result).toMatch(/^Error: invalid arguments: /);
    expect(result).toContain(`"${attack.named}"`);
    expect(result).toContain('nothing was sent');
    expect(await auditRow(callId)).toMatchObject({ decision: 'invalid', outcome: 'not_run' });
  });

  it('never lets an argument replace a query parameter fixed in the URL', async () => {
    const { result, callId } = await call('service_status', '{"service":"api","scope":"admin"}');
    expect(endpoint.requests).toEqual([]);
    expect(result).toContain('the query parameter "scope" is fixed');
    expect(await auditRow(callId)).toMatchObject({ decision: 'invalid', outcome: 'not_run' });

    await call('service_status', '{"service":"api"}');
    expect(endpoint.requests).toMatchObject([{ path: '/status?scope=read&format=json&service=api' }]);
    expect(endpoint.requests[0]?.headers.authorization).toBe(authorization);
  });

  // Where a hostile or compromised endpoint might send the call next.
  const report = {
    tool: 'fetch_report',
    arguments: '{"day":"monday"}',
    path: '/report',
    sent: '/report?day=monday',
  };
  const save = { tool: 'save_report', arguments: '{"text":"q3 numbers"}', path: '/save', sent: '/save' };
  const redirects = [
    { ...report, status: 302, to: 'elsewhere', why: 'this tool follows no redirects' },
    { ...report, status: 301, to: 'the same origin', why: 'this tool follows no redirects' },
    { ...save, status: 307, to: 'elsewhere', why: 'only within' },
    { ...save, status: 303, to: 'the same origin', why: 'would turn the POST into a GET' },
  ];

  it.each(redirects)('refuses a $status from $tool to $to', async (redirect) => {
    const target = redirect.to === 'elsewhere' ? elsewhere.url : endpoint.url;
    endpoint.respond(
      { status: redirect.status, headers: { location: `${target}/collect?from=butler` } },
      redirect.path,
    );
    const { result, callId } = await call(redirect.tool, redirect.arguments);
    expect(endpoint.requests.map((request) => request.path)).toEqual([redirect.sent]);
    expect(elsewhere.requests).toEqual([]);
    expect(result).toContain(`HTTP ${redirect.status} with a redirect to ${new URL(target).host}`);
    expect(result).toContain(redirect.why);
    expect(await auditRow(callId)).toMatchObject({ outcome: 'failed' });
  });

  it('follows a same-origin redirect when configured, with the request unchanged', async () => {
    endpoint.respond({ status: 307, headers: { location: '/save/v2' } }, '/save');
    endpoint.respond({ body: '{"saved":true}' }, '/save/v2');
    const { result } = await call('save_report', '{"text":"q3 numbers"}');
    expect(result).toBe('{"saved":true}');
    const [first, second] = endpoint.requests;
    expect(endpoint.requests).toHaveLength(2);
    expect(second).toMatchObject({ method: 'POST', path: '/save/v2', body: { text: 'q3 numbers' } });
    expect(second?.headers.authorization).toBe(authorization);
    expect(second?.headers['idempotency-key']).toBe(first?.headers['idempotency-key']);
  });

  it('reads an oversized answer only up to the byte cap, and says it was cut', async () => {
    // Far more than the socket buffers hold, so the endpoint can only finish if Butler reads it all.
    endpoint.respond({ streamBytes: 64 * 1024 * 1024 }, '/logs');
    const { result } = await call('export_logs', '{}');
    expect(await endpoint.streams.at(-1)).toBe(false);
    expect(result).toMatch(/^x{199}…\n\[cut: the answer was longer than 1048576 bytes/);
  });
});
