import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestButler, type TestButler } from '../../helpers/butler-app.js';
import { databaseKind } from '../../helpers/database.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { type FakeSlackApi, shownText, startFakeSlackApi } from '../../helpers/fake-slack-api.js';
import { readEvents } from '../../helpers/sse-client.js';
import { startToolServer, type ToolServer } from '../../helpers/tool-server.js';
import { waitFor, waitForAsync } from '../../helpers/wait-for.js';
import { botUserId, signingSecret } from '../../unit/slack/payloads.js';

/**
 * Scheduled tasks over the HTTP API, in a running Butler with Slack beside it: made, listed, paused and
 * cancelled through the schedule book's limits and permissions, and run as a turn whose reply reaches the
 * conversation's stream like any other.
 */

const keys = {
  ci: 'ci-schedules-key-0123456789',
  other: 'other-schedules-key-0123456789',
  admin: 'admin-schedules-key-0123456789',
  reader: 'reader-schedules-key-0123456789',
  oncall: 'oncall-schedules-key-0123456789',
};

let model: FakeModelServer;
let slack: FakeSlackApi;
let tools: ToolServer;
let app: TestButler;

beforeAll(async () => {
  model = await startFakeModelServer();
  slack = await startFakeSlackApi();
  tools = await startToolServer();
  const key = (name: string, variable: string, scopes: string[]) => ({
    name,
    key: `\${${variable}}`,
    scopes,
  });
  app = await startTestButler({
    env: {
      BUTLER_BASE_URL: model.baseUrl,
      BUTLER_MODEL: 'test-model',
      SLACK_BOT_TOKEN: 'xoxb-schedules',
      SLACK_SIGNING_SECRET: signingSecret,
      SLACK_API_URL: slack.url,
      KEY_CI: keys.ci,
      KEY_OTHER: keys.other,
      KEY_ADMIN: keys.admin,
      KEY_READER: keys.reader,
      KEY_ONCALL: keys.oncall,
    },
    config: {
      schedules: { maxActivePerPerson: 1, checkEvery: '200ms', minInterval: '10m' },
      // The admin key may approve: never a call its own task asked for, wherever the task runs.
      approvers: { api: ['admin', 'oncall'], slack: ['U0OPSLEAD'] },
      tools: [
        {
          name: 'restart_service',
          description: 'Restart a production service by name.',
          risk: 'high',
          input: { type: 'object', properties: { service: { type: 'string' } }, required: ['service'] },
          http: { method: 'POST', url: `${tools.url}/restart` },
        },
      ],
      api: {
        keys: [
          key('ci-bot', 'KEY_CI', ['chat']),
          key('other-bot', 'KEY_OTHER', ['chat']),
          key('admin', 'KEY_ADMIN', ['chat', 'read', 'approve']),
          key('reader', 'KEY_READER', ['read']),
          key('oncall', 'KEY_ONCALL', ['approve']),
        ],
      },
    },
  });
});
afterAll(async () => {
  await app.close();
  await model.close();
  await slack.close();
  await tools.close();
});
beforeEach(async () => {
  model.reset();
  slack.reset();
  // One active task per person: each test starts with none.
  for (const task of await app.butler.schedules.list({ admin: true, name: 'test' }))
    await app.butler.schedules.cancel(task.id, { admin: true, name: 'test' });
});

let conversation = 0;
const newConversation = () => `reminders-${Date.now()}-${++conversation}`;

function call(path: string, init: RequestInit & { key?: string; json?: unknown } = {}) {
  const { key = keys.ci, json, ...rest } = init;
  return fetch(`${app.url}/api/v1${path}`, {
    ...rest,
    ...(json === undefined ? {} : { body: JSON.stringify(json) }),
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...rest.headers },
  });
}

const create = (body: Record<string, unknown>, key = keys.ci) =>
  call('/schedules', { method: 'POST', json: body, key });

/** Makes a task; returns its id. */
async function made(body: Record<string, unknown>, key = keys.ci): Promise<string> {
  const response = await create(body, key);
  expect(response.status, JSON.stringify(await response.clone().json())).toBe(201);
  return ((await response.json()) as { id: string }).id;
}

const listed = async (key: string, query = '') =>
  ((await (await call(`/schedules${query}`, { key })).json()) as { items: Array<Record<string, unknown>> })
    .items;

const weekdays = { prompt: 'Post the digest', cron: '0 9 * * 1-5', timezone: 'Europe/Berlin' };

describe(`scheduled tasks over the HTTP API (${databaseKind})`, () => {
  it('makes a task in a conversation of the key, as the key, and confirms when it runs', async () => {
    const id = newConversation();
    const response = await create({ conversationId: id, ...weekdays });
    expect(response.status).toBe(201);
    const task = (await response.json()) as { id: string; confirmation: string; nextRunAt: string };
    expect(task).toMatchObject({
      conversationId: id,
      conversationKey: `api:ci-bot:${id}:main`,
      address: { platform: 'api', workspace: 'ci-bot', channel: id, thread: 'main' },
      source: 'api',
      creator: { platform: 'api', id: 'ci-bot', name: 'ci-bot' },
      prompt: 'Post the digest',
      cron: '0 9 * * 1-5',
      runAt: null,
      timezone: 'Europe/Berlin',
      status: 'active',
      lastOutcome: null,
      failures: 0,
    });
    expect(task.confirmation).toMatch(
      new RegExp(
        `^Task ${task.id} scheduled: next run .*09:00 \\(Europe/Berlin\\), then on "0 9 \\* \\* 1-5"`,
      ),
    );
    expect(new Date(task.nextRunAt).getTime()).toBeGreaterThan(Date.now());
    const detail = await (await call(`/schedules/${task.id}`)).json();
    expect(detail).toMatchObject({ id: task.id, status: 'active', runs: [] });
  });

  it('refuses a bad request with 400 and what to fix, and an oversized body with 413', async () => {
    const conversationId = newConversation();
    const refused = async (body: Record<string, unknown>, pattern: RegExp, code = 'invalid_schedule') => {
      const response = await create({ conversationId, prompt: 'Check the deploy', ...body });
      const answer = await response.json();
      expect(response.status, JSON.stringify(answer)).toBe(400);
      expect(answer).toMatchObject({ error: code, message: expect.stringMatching(pattern) });
    };
    await refused({ at: 'PT20M', cron: '0 9 * * *' }, /exactly one of "at" .* and "cron"/);
    await refused({}, /exactly one of "at" .* and "cron"/);
    await refused({ cron: 'every morning' }, /has 2 fields; a cron pattern here has 5/);
    await refused({ cron: '61 9 * * *' }, /is not a cron pattern/);
    await refused({ at: 'PT20M', timezone: 'Mars/Olympus' }, /"Mars\/Olympus" is not an IANA time zone/);
    await refused({ at: '2020-01-01T09:00' }, /is in the past/);
    await refused({ cron: '*/5 * * * *' }, /runs 300 s apart; runs must be at least 600 s apart/);
    await refused({ at: 'PT20M', every: 'day' }, /Unrecognized key/, 'invalid_body');
    await refused({ conversationId: 'no spaces', at: 'PT20M' }, /^conversationId: letters/, 'invalid_body');
    const neither = await create({ prompt: 'x', at: 'PT20M' });
    expect(await neither.json()).toMatchObject({
      error: 'invalid_body',
      message: 'conversationId: give exactly one of conversationId and conversation',
    });
    const huge = await create({ conversationId, prompt: 'x'.repeat(70_000), at: 'PT20M' });
    expect(huge.status).toBe(413);
    expect(await huge.json()).toMatchObject({ error: 'payload_too_large' });
    expect((await create({ conversationId, ...weekdays }, keys.reader)).status).toBe(403);
    expect(await listed(keys.reader)).toEqual([]);
  });

  it('keeps each key to its limit of active tasks', async () => {
    await made({ conversationId: newConversation(), ...weekdays });
    const second = await create({ conversationId: newConversation(), prompt: 'Another', at: 'PT1H' });
    expect(second.status).toBe(400);
    expect(await second.json()).toMatchObject({
      error: 'invalid_schedule',
      message: 'ci-bot already has 1 active tasks, the most allowed; cancel one first',
    });
    // Another key has its own allowance.
    await made({ conversationId: newConversation(), prompt: 'Another', at: 'PT1H' }, keys.other);
  });

  it("shows a key its own tasks, and a read key everyone's", async () => {
    const mine = newConversation();
    const ours = await made({ conversationId: mine, ...weekdays });
    const theirs = await made(
      { conversationId: newConversation(), prompt: 'Theirs', at: 'PT1H' },
      keys.other,
    );
    const ids = (items: Array<Record<string, unknown>>) => items.map((item) => item.id).sort();
    expect(ids(await listed(keys.ci))).toEqual([ours]);
    expect(ids(await listed(keys.ci, `?conversationId=${mine}`))).toEqual([ours]);
    expect(ids(await listed(keys.other, `?conversationId=${mine}`))).toEqual([]);
    expect(ids(await listed(keys.reader))).toEqual([ours, theirs].sort());
    // A read key names another key's conversation by its key; the id shown is only ever the caller's own.
    const [seen] = await listed(
      keys.reader,
      `?conversationId=${encodeURIComponent(`api:ci-bot:${mine}:main`)}`,
    );
    expect(seen).toMatchObject({ id: ours, conversationId: null, address: { workspace: 'ci-bot' } });
    expect((await call(`/schedules/${theirs}`)).status).toBe(403);
    expect((await call(`/schedules/${theirs}`, { key: keys.reader })).status).toBe(200);
    expect((await call('/schedules?status=later')).status).toBe(400);
  });

  it('lets the creator pause, resume and cancel, not another key; a read key may; unknown ids are 404', async () => {
    const conversationId = newConversation();
    const id = await made({ conversationId, ...weekdays });
    const act = (path: string, key = keys.ci, method = 'POST') =>
      call(`/schedules/${id}${path}`, { method, key });

    const paused = await act('/pause');
    expect(paused.status).toBe(200);
    expect(await paused.json()).toMatchObject({
      status: 'paused',
      statusNote: 'paused by ci-bot',
      nextRunAt: null,
    });
    const again = await act('/pause');
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({
      error: 'status_conflict',
      message: expect.stringMatching(/is paused/),
    });
    const resumed = (await (await act('/resume')).json()) as { nextRunAt: string };
    expect(resumed).toMatchObject({ status: 'active', statusNote: null });
    expect(new Date(resumed.nextRunAt).getTime()).toBeGreaterThan(Date.now());

    const stranger = await act('', keys.other, 'DELETE');
    expect(stranger.status).toBe(403);
    expect(await stranger.json()).toMatchObject({
      error: 'not_allowed',
      message: expect.stringMatching(/made this task/),
    });
    expect((await act('/pause', keys.other)).status).toBe(403);
    const cancelled = await act('', keys.ci, 'DELETE');
    expect(cancelled.status).toBe(200);
    expect(await cancelled.json()).toMatchObject({ status: 'cancelled', statusNote: 'cancelled by ci-bot' });
    expect((await act('', keys.ci, 'DELETE')).status).toBe(409);
    expect((await act('/resume')).status).toBe(409);
    expect(await listed(keys.ci, `?status=cancelled&conversationId=${conversationId}`)).toEqual([
      expect.objectContaining({ id }),
    ]);

    const second = await made({ conversationId: newConversation(), ...weekdays });
    const byAdmin = await call(`/schedules/${second}`, { method: 'DELETE', key: keys.reader });
    expect(await byAdmin.json()).toMatchObject({ status: 'cancelled', statusNote: 'cancelled by reader' });

    for (const unknown of [randomUUID(), 'not-a-task'])
      for (const [path, method] of [
        ['', 'GET'],
        ['', 'DELETE'],
        ['/pause', 'POST'],
        ['/resume', 'POST'],
      ] as const) {
        const response = await call(`/schedules/${unknown}${path}`, { method });
        expect(response.status, `${method} ${unknown}${path}`).toBe(404);
      }
  });

  it('runs a task made over the API as a turn whose reply reaches the stream, and records how it went', async () => {
    const conversationId = newConversation();
    model.enqueue({ text: 'Noted.' });
    const opened = await readEvents(
      await call(`/conversations/${conversationId}/messages`, { method: 'POST', json: { text: 'hello' } }),
    );
    const id = await made({ conversationId, prompt: 'Say that the deploy is due', at: 'PT1S' });
    model.enqueue({ text: 'The deploy is due.' });
    const events = await readEvents(
      await call(`/conversations/${conversationId}/events?after=${opened.at(-1)?.id}`),
      (event) => event.data.type === 'done',
    );
    expect(events.map((event) => event.data)).toContainEqual({
      type: 'message',
      role: 'assistant',
      content: 'The deploy is due.',
    });
    // The run starts with its prompt, as the task's.
    expect(events.find((event) => event.data.role === 'user')?.data).toEqual({
      type: 'message',
      role: 'user',
      content: 'Say that the deploy is due',
      scheduleId: id,
    });
    // The whole stored history, both turns, without following.
    const stored = await readEvents(
      await call(`/conversations/${conversationId}/events?after=0&follow=false`),
    );
    expect(stored.filter((event) => event.data.type === 'done')).toHaveLength(2);
    expect(stored.at(-1)?.data.type).toBe('done');
    const runRequest = model.requests.at(-1);
    expect(String(runRequest?.messages.at(-1)?.content)).toContain('Say that the deploy is due');
    // The outcome is recorded once the turn has ended, just after its `done`.
    await app.settle();
    expect(await (await call(`/schedules/${id}`)).json()).toMatchObject({
      status: 'done',
      nextRunAt: null,
      lastOutcome: 'replied',
      failures: 0,
      runs: [{ outcome: 'replied', slot: expect.any(String), at: expect.any(String) }],
    });
  });

  it('reads times in a message in the time zone the client sends with it', async () => {
    const conversationId = newConversation();
    model.enqueue(
      {
        toolCalls: [
          {
            name: 'schedule_task',
            arguments: JSON.stringify({ prompt: 'Stand-up', at: '2030-01-07T09:00' }),
          },
        ],
      },
      { text: 'Scheduled.' },
    );
    const send = (body: Record<string, unknown>) =>
      call(`/conversations/${conversationId}/messages`, {
        method: 'POST',
        json: { text: 'remind me at 9 on 7 Jan 2030', ...body },
      });
    const refused = await send({ timezone: 'Mars/Olympus' });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({
      message: 'timezone: an IANA time zone, e.g. Europe/Berlin',
    });
    await readEvents(await send({ timezone: 'America/New_York' }));
    expect(String(model.requests[0]?.messages[0]?.content)).toContain(
      "The person's time zone is America/New_York",
    );
    expect(await listed(keys.ci)).toEqual([
      expect.objectContaining({
        source: 'chat',
        timezone: 'America/New_York',
        nextRunAt: '2030-01-07T14:00:00.000Z',
        creator: { platform: 'api', id: 'ci-bot', name: 'ci-bot' },
      }),
    ]);
  });

  it('never lets a key approve a high-risk call its own task asked for in a Slack channel', async () => {
    const ops = { platform: 'slack', workspace: 'T0BUTLER', channel: 'C0OPS2' };
    model.enqueue({
      toolCalls: [{ id: `call_${randomUUID()}`, name: 'restart_service', arguments: '{"service":"api"}' }],
    });
    await made({ conversation: ops, prompt: 'Restart the api service', at: 'PT1S' }, keys.admin);
    const pending = await waitForAsync(async () => {
      const listedApprovals = (await (
        await call('/approvals?status=pending', { key: keys.admin })
      ).json()) as {
        items: Array<{ id: string; requesters: Array<{ platform: string; id: string }> }>;
      };
      return listedApprovals.items[0];
    }, 10_000);
    expect(pending.requesters).toEqual([expect.objectContaining({ platform: 'api', id: 'admin' })]);
    const own = await call(`/approvals/${pending.id}/decision`, {
      method: 'POST',
      key: keys.admin,
      json: { decision: 'approve' },
    });
    expect(own.status).toBe(403);
    expect(await own.json()).toMatchObject({ error: 'not_authorized' });
    model.enqueue({ text: 'Restarted.' });
    const other = await call(`/approvals/${pending.id}/decision`, {
      method: 'POST',
      key: keys.oncall,
      json: { decision: 'approve' },
    });
    expect(other.status).toBe(200);
    await waitFor(() => tools.requests.length === 1 || undefined, 10_000);
    await app.settle();
    expect(tools.requests).toHaveLength(1);
  });

  it('lets a read key put a task into a Slack channel, run as the key itself there, not a Slack person', async () => {
    const ops = { platform: 'slack', workspace: 'T0BUTLER', channel: 'C0OPS' };
    const refused = await create({ conversation: ops, ...weekdays }, keys.ci);
    expect(refused.status).toBe(403);
    const feishu = await create({ conversation: { ...ops, platform: 'feishu' }, ...weekdays }, keys.admin);
    expect(await feishu.json()).toMatchObject({ error: 'platform_unavailable' });

    model.enqueue({ text: 'Digest: all quiet.' });
    const id = await made({ conversation: ops, prompt: 'Post the digest', at: 'PT1S' }, keys.admin);
    const [task] = await listed(keys.admin);
    expect(task).toMatchObject({
      id,
      conversationKey: 'slack:T0BUTLER:C0OPS:main',
      conversationId: null,
      creator: { platform: 'api', id: 'admin', name: 'admin' },
    });
    const posted = await waitFor(
      () =>
        [...slack.messages.values()].find(
          (message) =>
            message.channel === 'C0OPS' &&
            message.user === botUserId &&
            shownText(message).includes('all quiet'),
        ),
      10_000,
    );
    expect(shownText(posted)).toContain('Digest: all quiet.');
    await app.settle();
    expect(await (await call(`/schedules/${id}`, { key: keys.admin })).json()).toMatchObject({
      status: 'done',
      lastOutcome: 'replied',
    });
  });
});
