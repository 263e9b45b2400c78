import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestButler, type TestButler, type TestButlerOptions } from '../../helpers/butler-app.js';
import { databaseKind } from '../../helpers/database.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { type FakeSlackApi, shownText, startFakeSlackApi } from '../../helpers/fake-slack-api.js';
import {
  type McpHttpTestServer,
  readCallLog,
  startMcpHttpServer,
  stdioTestTransport,
} from '../../helpers/mcp-test-server.js';
import {
  appMention,
  asForm,
  asJson,
  blockActions,
  envelope,
  postToSlack,
  signingSecret,
} from '../../unit/slack/payloads.js';
import { botUserId, freshTs } from '../slack/slack-butler.js';

/**
 * MCP servers as Butler tools, through the running Butler with Slack over HTTP: the real MCP client
 * against the MCP test server (Streamable HTTP in this process, or stdio as Butler's child).
 */

let slack: FakeSlackApi;
let model: FakeModelServer;
let records: McpHttpTestServer;
let app: TestButler;

function options(mcpServers: unknown[], extra: Partial<TestButlerOptions> = {}): TestButlerOptions {
  return {
    env: {
      SLACK_BOT_TOKEN: 'xoxb-mcp',
      SLACK_SIGNING_SECRET: signingSecret,
      SLACK_API_URL: slack.url,
      BUTLER_BASE_URL: model.baseUrl,
      BUTLER_MODEL: 'test-model',
    },
    config: { approvers: { slack: ['U0APPROVER'] }, mcpServers },
    ...extra,
  };
}

const recordsServer = () => ({
  name: 'records',
  url: records.url,
  timeoutMs: 1_500,
  connectTimeoutMs: 3_000,
  maxResultChars: 300,
  tools: {
    include: ['lookup', 'update_record', 'delete_record', 'plain', 'slow', 'fail', 'big_output'],
    risk: { plain: 'medium', fail: 'low', big_output: 'low' },
  },
});

beforeAll(async () => {
  slack = await startFakeSlackApi();
  model = await startFakeModelServer();
  records = await startMcpHttpServer();
  app = await startTestButler(options([recordsServer()]));
});
afterAll(async () => {
  await app?.close();
  await records.stop();
  await model.close();
  await slack.close();
});
beforeEach(() => {
  slack.reset();
  model.reset();
  records.calls.length = 0;
});

async function ask(butler: TestButler, text: string, ...replies: Parameters<FakeModelServer['enqueue']>) {
  model.enqueue(...replies);
  const threadTs = freshTs();
  const response = await postToSlack(
    `${butler.url}/slack/events`,
    asJson(envelope(appMention({ ts: threadTs, text: `<@${botUserId}> ${text}` }))),
  );
  expect(response.status).toBe(200);
  await butler.settle();
  return threadTs;
}

function cardIn(threadTs: string) {
  const card = slack
    .threadMessages('C0GENERAL', threadTs)
    .find((message) => JSON.stringify(message.blocks ?? '').includes('butler_approve'));
  if (!card) throw new Error('no approval card');
  const approvalId = /"value":"([0-9a-f-]{36})"/.exec(JSON.stringify(card.blocks))?.[1] ?? '';
  return { card, approvalId };
}

function click(
  butler: TestButler,
  threadTs: string,
  actionId: 'butler_approve' | 'butler_reject',
  { card, approvalId } = cardIn(threadTs),
) {
  return postToSlack(
    `${butler.url}/slack/events`,
    asForm(blockActions({ approvalId, actionId, messageTs: card.ts, threadTs })),
  );
}

const toolResult = (index: number) =>
  String(model.requests[index]?.messages.find((message) => message.role === 'tool')?.content ?? '');

describe(`MCP tools through the running Butler on Slack (${databaseKind})`, () => {
  it('offers the included tools under their server prefix and reports the server as connected', async () => {
    await ask(app, 'what can you do?', { text: 'Lots.' });
    const names = (model.requests[0]?.tools ?? []).map((tool) => (tool.function as { name: string }).name);
    expect(names).toEqual(
      expect.arrayContaining([
        'records__lookup',
        'records__update_record',
        'records__delete_record',
        'records__slow',
      ]),
    );
    expect(names).not.toContain('records__structured');
    const ready = (await (await fetch(`${app.url}/readyz`)).json()) as Record<string, unknown>;
    expect(ready).toMatchObject({ ready: true, mcp: { records: 'connected (MCP 2025-11-25), 7 tools' } });
  });

  it('runs a read-only tool at once and gives the model its result', async () => {
    await ask(
      app,
      'find acme',
      { toolCalls: [{ id: 'lookup_1', name: 'records__lookup', arguments: '{"query":"acme"}' }] },
      { text: 'Found acme.' },
    );
    expect(records.calls.map((call) => call.tool)).toEqual(['lookup']);
    expect(toolResult(1)).toBe('found acme');
  });

  it('parks a destructive tool on a card that names the server, and runs it once after approval', async () => {
    const threadTs = await ask(app, 'delete r1', {
      toolCalls: [{ id: 'delete_1', name: 'records__delete_record', arguments: '{"id":"r1"}' }],
    });
    expect(records.calls).toEqual([]);
    const pending = cardIn(threadTs);
    const shown = JSON.stringify(pending.card.blocks);
    expect(shown).toContain('delete_record');
    expect(shown).toContain('records');
    expect(shown).toContain('id=r1');

    model.enqueue({ text: 'Deleted r1.' });
    expect((await click(app, threadTs, 'butler_approve', pending)).status).toBe(200);
    await app.settle();
    await click(app, threadTs, 'butler_approve', pending);
    await app.settle();
    expect(records.calls.map((call) => call.tool)).toEqual(['delete_record']);
    expect(toolResult(1)).toBe('deleted r1');
    expect(slack.threadMessages('C0GENERAL', threadTs).map(shownText)).toContain('Deleted r1.');
  });

  it('tells the model about a rejection and runs nothing', async () => {
    const threadTs = await ask(app, 'run plain', {
      toolCalls: [{ id: 'plain_1', name: 'records__plain', arguments: '{}' }],
    });
    slack.failNext('views.open', { error: 'expired_trigger_id' });
    model.enqueue({ text: 'Not run.' });
    await click(app, threadTs, 'butler_reject');
    await app.settle();
    expect(records.calls).toEqual([]);
    expect(toolResult(1)).toMatch(/^Rejected by approver/);
  });

  it('reports a timeout, a tool error and an oversized result to the model as such, and still answers', async () => {
    await ask(
      app,
      'slow, failing and big',
      {
        toolCalls: [
          { id: 'slow_1', name: 'records__slow', arguments: '{"ms":5000}' },
          { id: 'fail_1', name: 'records__fail', arguments: '{}' },
          { id: 'big_1', name: 'records__big_output', arguments: '{"chars":5000}' },
        ],
      },
      { text: 'Mixed results.' },
    );
    const results = (model.requests[1]?.messages ?? [])
      .filter((message) => message.role === 'tool')
      .map((message) => String(message.content));
    expect(results[0]).toMatch(/^Error: the tool failed: .*(time|1500)/i);
    expect(results[1]).toMatch(/^Error: the tool failed: /);
    expect(results[2]?.length).toBeLessThanOrEqual(300);
    expect(results[2]).toMatch(/cut|truncated/i);
    expect(
      slack.callsTo('chat.startStream').length + slack.callsTo('chat.postMessage').length,
    ).toBeGreaterThan(0);
  });

  it('starts with a server that is down, reports it degraded, and offers its tools once it is back', async () => {
    await records.stop();
    const second = await startTestButler(options([{ ...recordsServer(), name: 'later' }]));
    try {
      const ready = await fetch(`${second.url}/readyz`);
      expect(ready.status).toBe(200);
      expect(((await ready.json()) as { mcp: Record<string, string> }).mcp.later).toMatch(/^degraded: down/);
      await ask(second, 'anything?', { text: 'No tools.' });
      expect(JSON.stringify(model.requests[0]?.tools ?? [])).not.toContain('later__');

      await records.start();
      await expect
        .poll(
          async () =>
            ((await (await fetch(`${second.url}/readyz`)).json()) as { mcp: Record<string, string> }).mcp
              .later,
          {
            timeout: 10_000,
          },
        )
        .toMatch(/^connected/);
      await ask(second, 'now?', { text: 'Tools are back.' });
      expect(JSON.stringify(model.requests[1]?.tools ?? [])).toContain('later__lookup');
    } finally {
      await second.close();
      if (records.calls.length === 0) await records.start().catch(() => {});
    }
  });

  it('keeps a parked stdio tool call across a Butler restart (and its child), and runs it once after the click', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'butler-mcp-restart-'));
    const callLog = join(dataDir, 'calls.jsonl');
    const child = { name: 'local', ...stdioTestTransportConfig(callLog), connectTimeoutMs: 20_000 };
    const first = await startTestButler(options([child], { dataDir }));
    const threadTs = await ask(first, 'delete r9', {
      toolCalls: [{ id: 'delete_9', name: 'local__delete_record', arguments: '{"id":"r9"}' }],
    });
    cardIn(threadTs);
    await first.stop();

    const second = await startTestButler(
      options([child], { dataDir, ...(first.databaseUrl ? { databaseUrl: first.databaseUrl } : {}) }),
    );
    try {
      model.enqueue({ text: 'Deleted r9 after the restart.' });
      expect((await click(second, threadTs, 'butler_approve')).status).toBe(200);
      await second.settle();
      expect(
        readCallLog(callLog)
          .filter((call) => call.event === 'called')
          .map((call) => call.tool),
      ).toEqual(['delete_record']);
      expect(toolResult(1)).toBe('deleted r9');
    } finally {
      await second.close();
      await first.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});

/** The stdio test server as a config-file entry: `command` and `args` as a user would write them. */
function stdioTestTransportConfig(callLog: string) {
  const transport = stdioTestTransport(callLog);
  if (transport.kind !== 'stdio') throw new Error('expected stdio');
  return {
    command: transport.command,
    args: transport.args,
    env: transport.env,
    ...(transport.cwd ? { cwd: transport.cwd } : {}),
  };
}
