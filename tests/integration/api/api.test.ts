import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestButler, type TestButler } from '../../helpers/butler-app.js';
import { databaseKind } from '../../helpers/database.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { refuseInboxWrites } from '../../helpers/hostile-text.js';
import { readEvents, type SseEvent, types } from '../../helpers/sse-client.js';
import { startToolServer, type ToolServer } from '../../helpers/tool-server.js';

/** Other systems talking to Butler over HTTP: the same durable core, approvals and memory, streamed as SSE. */

const keys = {
  ci: 'ci-key-0123456789abcdef',
  oncall: 'oncall-key-0123456789abcdef',
  reader: 'reader-key-0123456789abcdef',
};

let model: FakeModelServer;
let tools: ToolServer;
let app: TestButler;

beforeAll(async () => {
  model = await startFakeModelServer();
  tools = await startToolServer();
  const tool = (name: string, risk: string) => ({
    name,
    description: `${name} of a service.`,
    risk,
    input: { type: 'object', properties: { service: { type: 'string' } }, required: ['service'] },
    http: { method: 'POST', url: `${tools.url}/${name}` },
  });
  app = await startTestButler({
    env: {
      BUTLER_BASE_URL: model.baseUrl,
      BUTLER_MODEL: 'test-model',
      KEY_CI: keys.ci,
      KEY_ONCALL: keys.oncall,
      KEY_READER: keys.reader,
    },
    config: {
      approvers: { console: ['olga'], api: ['oncall'] },
      tools: [tool('service_status', 'low'), tool('restart_service', 'high')],
      api: {
        keys: [
          // biome-ignore lint/suspicious/noTemplateCurlyInString: Butler's own ${VAR} interpolation.
          { name: 'ci-bot', key: '${KEY_CI}', scopes: ['chat', 'read'] },
          // biome-ignore lint/suspicious/noTemplateCurlyInString: Butler's own ${VAR} interpolation.
          { name: 'oncall', key: '${KEY_ONCALL}', scopes: ['chat', 'approve', 'read'] },
          // biome-ignore lint/suspicious/noTemplateCurlyInString: Butler's own ${VAR} interpolation.
          { name: 'reader', key: '${KEY_READER}', scopes: ['read'] },
        ],
      },
    },
  });
});
afterAll(async () => {
  await app.close();
  await model.close();
  await tools.close();
});
beforeEach(() => {
  model.reset();
  tools.requests.length = 0;
});

let conversation = 0;
const newConversation = () => `deploy-${Date.now()}-${++conversation}`;

function call(path: string, init: RequestInit & { key?: string } = {}) {
  const { key = keys.ci, ...rest } = init;
  return fetch(`${app.url}/api/v1${path}`, {
    ...rest,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...rest.headers },
  });
}

const send = (id: string, text: string, key = keys.ci) =>
  call(`/conversations/${id}/messages`, { method: 'POST', body: JSON.stringify({ text }), key });

/** The events stored after `afterId` that a follower sees within `ms` (the stream itself would wait on). */
async function eventsWithin(id: string, afterId: string | undefined, ms: number) {
  const seen: SseEvent[] = [];
  const response = await call(`/conversations/${id}/events?after=${afterId}`, {
    signal: AbortSignal.timeout(ms),
  });
  await readEvents(response, (_event, all) => {
    seen.splice(0, seen.length, ...all);
    return false;
  }).catch(() => {});
  return seen;
}

describe(`HTTP API on ${databaseKind}`, () => {
  it('refuses a missing or wrong key with 401 and a key without the scope with 403', async () => {
    const missing = await fetch(`${app.url}/api/v1/conversations`);
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toBe('Bearer');
    expect((await call('/conversations', { key: 'wrong-key-0123456789' })).status).toBe(401);
    const forbidden = await send(newConversation(), 'hi', keys.reader);
    expect(forbidden.status).toBe(403);
    expect(await forbidden.json()).toMatchObject({ error: 'forbidden' });
    expect((await call('/nowhere')).status).toBe(404);
    expect(await (await call('/me', { key: keys.reader })).json()).toEqual({
      name: 'reader',
      scopes: ['read'],
    });
    expect((await call('/conversations', { method: 'POST' })).status).toBe(405);
  });

  it('answers 503 with the reason while the database refuses the message, then takes it', async () => {
    const id = newConversation();
    const allow = await refuseInboxWrites(app);
    try {
      const refused = await send(id, 'hello while the database is down');
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('5');
      expect(await refused.json()).toMatchObject({
        error: 'database_unavailable',
        message: expect.stringMatching(/^Butler cannot use its database right now/),
      });
    } finally {
      await allow();
    }
    model.enqueue({ text: 'Back.' });
    const again = await send(id, 'hello again');
    expect(again.status).toBe(200);
    // Read to the end: a turn still asking the model when the next test starts would take that test's script.
    expect(types(await readEvents(again))).toContain('done');
  });

  it('answers 400 for a malformed body and for text over its limit', async () => {
    const id = newConversation();
    const broken = await call(`/conversations/${id}/messages`, { method: 'POST', body: '{not json' });
    expect(broken.status).toBe(400);
    expect((await send(id, '   ')).status).toBe(400);
    // Each problem names its field.
    const missing = await call(`/conversations/${id}/messages`, { method: 'POST', body: '{"txt":"hi"}' });
    expect(await missing.json()).toMatchObject({
      error: 'invalid_body',
      message: expect.stringMatching(/text: required/),
    });
    const huge = await call(`/conversations/${id}/messages`, {
      method: 'POST',
      body: JSON.stringify({ text: 'x'.repeat(70_000) }),
    });
    // The body may hold a message's files (tests/integration/api/files.test.ts): the text has its own limit.
    expect(huge.status).toBe(400);
    expect(await huge.json()).toMatchObject({ message: expect.stringMatching(/^text: Too big/) });
    expect(
      (await call('/conversations/bad%20id/messages', { method: 'POST', body: '{"text":"hi"}' })).status,
    ).toBe(400);
  });

  it('streams a turn with its tool call, tool result, text, final message and usage', async () => {
    model.enqueue(
      { toolCalls: [{ id: 'status_1', name: 'service_status', arguments: '{"service":"api"}' }] },
      { text: 'api is up.', chunks: ['api ', 'is up.'], usage: { promptTokens: 40, completionTokens: 4 } },
    );
    const response = await send(newConversation(), 'is api up?');
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const events = await readEvents(response);
    expect(types(events)).toEqual(
      expect.arrayContaining(['message', 'tool_call', 'tool_result', 'delta', 'done']),
    );
    // The message is shown once; usually first, but a worker that claims it before the route has written it
    // may write the turn's first events ahead of it (the race in conversation-routes.ts).
    expect(events.filter((event) => event.data.role === 'user').map((event) => event.data)).toEqual([
      { type: 'message', role: 'user', content: 'is api up?' },
    ]);
    expect(events.find((event) => event.data.type === 'tool_call')?.data).toEqual({
      type: 'tool_call',
      id: 'status_1',
      name: 'service_status',
      args: { service: 'api' },
    });
    expect(events.find((event) => event.data.type === 'tool_result')?.data).toMatchObject({
      name: 'service_status',
      output: '{"ok":true}',
      error: null,
    });
    const text = events.filter((event) => event.data.type === 'delta').map((event) => event.data.text);
    expect(text.join('')).toBe('api is up.');
    expect(events.at(-2)?.data).toEqual({ type: 'message', role: 'assistant', content: 'api is up.' });
    expect(events.at(-1)?.data).toMatchObject({ type: 'done', usage: { promptTokens: expect.any(Number) } });
    const ids = events.map((event) => Number(event.id));
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
  });

  it('streams a message sent during a running turn until the turn that answers it', async () => {
    const id = newConversation();
    model.enqueue(
      { text: 'Answer A.', chunks: ['Ans', 'wer ', 'A.'], chunkDelayMs: 300 },
      { text: 'Answer B.' },
    );
    const first = send(id, 'question A').then(async (response) => ({
      messageId: response.headers.get('butler-message-id'),
      events: await readEvents(response),
    }));
    await model.waitForRequests(1);
    const second = await send(id, 'question B');
    const messageId = second.headers.get('butler-message-id');
    const events = await readEvents(second);
    const a = await first;

    // A's own message may be written to the stream late (the route writes it once stored, and the turn may have
    // begun): B's stream holds B's message, wherever A's falls.
    expect(events.map((event) => event.data)).toContainEqual({
      type: 'message',
      role: 'user',
      content: 'question B',
    });
    expect(events.at(-2)?.data).toEqual({ type: 'message', role: 'assistant', content: 'Answer B.' });
    expect(events.at(-1)?.data).toMatchObject({ type: 'done', answers: [messageId] });
    expect(a.events.at(-1)?.data).toMatchObject({ type: 'done', answers: [a.messageId] });
    expect(a.events.map((event) => event.data.content)).not.toContain('Answer B.');
  });

  it('keeps the text the model wrote before a tool call ahead of that call', async () => {
    model.enqueue(
      {
        text: 'Let me check. ',
        toolCalls: [{ id: 'status_2', name: 'service_status', arguments: '{"service":"api"}' }],
      },
      { text: 'All good.' },
    );
    const events = await readEvents(await send(newConversation(), 'status?'));
    expect(events.map((event) => [event.data.type, event.data.text ?? ''])).toEqual([
      ['message', ''],
      ['delta', 'Let me check. '],
      ['tool_call', ''],
      ['tool_result', ''],
      ['delta', '\n\nAll good.'],
      ['message', ''],
      ['done', ''],
    ]);
  });

  it('ends the stream at confirm_required; an API approver decides; Last-Event-ID streams the continuation', async () => {
    const id = newConversation();
    model.enqueue({
      toolCalls: [{ id: 'restart_1', name: 'restart_service', arguments: '{"service":"api"}' }],
    });
    const first = await readEvents(await send(id, 'restart api'));
    const confirm = first.at(-1);
    expect(confirm?.data).toMatchObject({
      type: 'confirm_required',
      tool: 'restart_service',
      args: { service: 'api' },
      risk: 'high',
    });
    const approvalId = String(confirm?.data.approvalId);

    const byRequester = await call(`/approvals/${approvalId}/decision`, {
      method: 'POST',
      body: JSON.stringify({ decision: 'approve' }),
    });
    expect(byRequester.status).toBe(403);
    expect(tools.requests).toEqual([]);

    model.enqueue({ text: 'Restarted api.' });
    const decided = await call(`/approvals/${approvalId}/decision`, {
      method: 'POST',
      key: keys.oncall,
      body: JSON.stringify({ decision: 'approve' }),
    });
    expect(decided.status).toBe(200);
    expect(await decided.json()).toMatchObject({ ok: true, status: 'approved' });
    const again = await call(`/approvals/${approvalId}/decision`, {
      method: 'POST',
      key: keys.oncall,
      body: JSON.stringify({ decision: 'reject' }),
    });
    expect(again.status).toBe(409);

    const continuation = await readEvents(
      await call(`/conversations/${id}/events`, { headers: { 'last-event-id': String(confirm?.id) } }),
    );
    expect(types(continuation)).toEqual(['tool_call', 'tool_result', 'delta', 'message', 'done']);
    expect(tools.requests.map((request) => request.path)).toEqual(['/restart_service']);
  });

  it('finishes a turn whose client disconnected, and lets it be read afterwards', async () => {
    const id = newConversation();
    model.enqueue({ text: 'A long answer.', chunks: ['A ', 'long ', 'answer.'], chunkDelayMs: 150 });
    const partial = await readEvents(await send(id, 'tell me more'), (event) => event.data.type === 'delta');
    expect(types(partial).at(-1)).toBe('delta');
    await app.settle();
    const all = await readEvents(await call(`/conversations/${id}/events?after=0`));
    expect(all.at(-2)?.data).toEqual({ type: 'message', role: 'assistant', content: 'A long answer.' });
    expect(all.at(-1)?.data.type).toBe('done');
    const stored = await call(`/conversations/${id}`);
    expect(await stored.json()).toMatchObject({
      messages: [
        { role: 'user', content: 'tell me more' },
        { role: 'assistant', content: 'A long answer.' },
      ],
    });
  });

  it('pages through conversations, approvals and the audit log with cursors', async () => {
    for (let index = 0; index < 3; index++) {
      model.enqueue({ text: `answer ${index}` });
      await readEvents(await send(newConversation(), `question ${index}`));
    }
    const first = (await (await call('/conversations?limit=2', { key: keys.reader })).json()) as {
      items: Array<{ key: string; address: { platform: string } }>;
      nextCursor: string;
    };
    expect(first.items).toHaveLength(2);
    expect(first.items[0]?.address.platform).toBe('api');
    expect(first.items[0]).toHaveProperty('costUsd', null);
    const second = (await (
      await call(`/conversations?limit=2&cursor=${first.nextCursor}`, { key: keys.reader })
    ).json()) as { items: Array<{ key: string }> };
    expect(second.items.length).toBeGreaterThan(0);
    const keysSeen = [...first.items, ...second.items].map((item) => item.key);
    expect(new Set(keysSeen).size).toBe(keysSeen.length);

    const pending = await call('/approvals?status=pending&limit=1', { key: keys.reader });
    expect(pending.status).toBe(200);
    const audit = (await (await call('/audit?tool=restart_service', { key: keys.reader })).json()) as {
      items: Array<{ toolName: string; decidedBy: string }>;
    };
    expect(audit.items[0]).toMatchObject({ toolName: 'restart_service', decidedBy: 'oncall' });
    const badDate = await call('/audit?since=yesterday', { key: keys.reader });
    expect(badDate.status).toBe(400);
    expect(((await badDate.json()) as { message: string }).message).toBe(
      'since: not a date: send ISO 8601, e.g. 2026-11-25 or 2026-11-25T09:00:00Z',
    );
  });

  it('ends the stream with an error event when the model fails, and says so in the reply', async () => {
    model.enqueue({ status: 400, body: { error: { message: 'bad request' } } });
    const events = await readEvents(await send(newConversation(), 'break please'));
    expect(events.at(-1)?.data).toMatchObject({ type: 'error', error: expect.any(String) });
    expect(types(events)).toContain('message');
  });

  it('sends a retried message with the same Idempotency-Key once', async () => {
    const id = newConversation();
    model.enqueue({ text: 'Once.' });
    const headers = { 'idempotency-key': 'deploy-42-attempt' };
    const body = JSON.stringify({ text: 'ship it' });
    const first = await call(`/conversations/${id}/messages`, { method: 'POST', body, headers });
    const answered = await readEvents(first);
    const retry = await call(`/conversations/${id}/messages`, { method: 'POST', body, headers });
    expect(retry.status).toBe(409);
    await app.settle();
    expect(model.requests).toHaveLength(1);
    // The refused retry left nothing in the conversation's events.
    expect(await eventsWithin(id, answered.at(-1)?.id, 800)).toEqual([]);
  });

  it('answers 404 for the events of a conversation that never was, and 400 for a broken path', async () => {
    const unknown = await call(`/conversations/${newConversation()}/events`);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ error: 'not_found' });
    const broken = await call('/conversations/%E0%A4%A/messages', { method: 'POST', body: '{"text":"hi"}' });
    expect(broken.status).toBe(400);
    expect(await broken.json()).toMatchObject({ error: 'invalid_path' });
  });

  it('lists no connections where no server wants OAuth, and knows no server to connect', async () => {
    const listed = await call('/connections');
    expect(listed.status).toBe(200);
    expect(await listed.json()).toEqual({ servers: [], items: [] });
    expect((await call('/connections/tickets/link', { method: 'POST' })).status).toBe(404);
  });

  it('resumes after ?after= when Last-Event-ID is sent empty', async () => {
    const id = newConversation();
    model.enqueue({ text: 'Resumed.' });
    const events = await readEvents(await send(id, 'hello'));
    const resumed = await readEvents(
      await call(`/conversations/${id}/events?after=${events[0]?.id}`, { headers: { 'last-event-id': '' } }),
    );
    expect(resumed.map((event) => event.id)).toEqual(events.slice(1).map((event) => event.id));
  });

  it('reads a conversation by its full key', async () => {
    const id = newConversation();
    model.enqueue(
      { toolCalls: [{ id: 'status_read', name: 'service_status', arguments: '{"service":"api"}' }] },
      { text: 'Hi.' },
    );
    await readEvents(await send(id, 'hello'));
    const key = encodeURIComponent(`api:ci-bot:${id}:main`);
    const byKey = await call(`/conversations/${key}`, { key: keys.reader });
    expect(byKey.status).toBe(200);
    const detail = (await byKey.json()) as { messages: Array<{ role: string; toolCalls: unknown[] }> };
    expect(detail).toMatchObject({ address: { platform: 'api', workspace: 'ci-bot', channel: id } });
    // A step that only called a tool shows which, not an empty message.
    expect(detail.messages.find((message) => message.toolCalls.length > 0)?.toolCalls).toEqual([
      { name: 'service_status', arguments: '{"service":"api"}' },
    ]);
    expect((await call('/conversations/nobody%3Ahere', { key: keys.reader })).status).toBe(404);
  });

  it('rolls usage up to what the turns reported', async () => {
    const id = newConversation();
    model.enqueue({ text: 'One.', usage: { promptTokens: 30, completionTokens: 3 } });
    const first = await send(id, 'first');
    const done = (await readEvents(first)).at(-1);
    model.enqueue({ text: 'Two.', usage: { promptTokens: 50, completionTokens: 5 } });
    await readEvents(await send(id, 'second'));
    expect(done?.data).toEqual({
      type: 'done',
      turnId: expect.any(String),
      usage: { promptTokens: 30, completionTokens: 3 },
      answers: [first.headers.get('butler-message-id')],
    });
    const usage = (await (await call('/usage?groupBy=conversation', { key: keys.reader })).json()) as {
      items: Array<{ key: string; turns: number; promptTokens: number; completionTokens: number }>;
    };
    expect(usage.items.find((item) => item.key === `api:ci-bot:${id}:main`)).toMatchObject({
      turns: 2,
      promptTokens: 80,
      completionTokens: 8,
    });
    expect((await call('/usage?groupBy=planet', { key: keys.reader })).status).toBe(400);
  });

  it('publishes an OpenAPI document generated from the schemas, without a key', async () => {
    const response = await fetch(`${app.url}/api/v1/openapi.json`);
    expect(response.status).toBe(200);
    const document = (await response.json()) as { openapi: string; paths: Record<string, unknown> };
    expect(document.openapi).toBe('3.1.0');
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining([
        '/conversations/{id}/messages',
        '/approvals/{id}/decision',
        '/usage',
        '/events',
      ]),
    );
    expect(JSON.stringify(document.paths['/conversations/{id}/messages'])).toContain('"maxLength":20000');
  });
});
