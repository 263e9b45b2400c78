import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestButler, type TestButler } from '../../helpers/butler-app.js';
import { databaseKind } from '../../helpers/database.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { type FakeSlackApi, startFakeSlackApi } from '../../helpers/fake-slack-api.js';
import { type McpHttpTestServer, startMcpHttpServer } from '../../helpers/mcp-test-server.js';
import { inboundMessage } from '../../helpers/messages.js';
import { serviceTools } from '../../helpers/platform-butler.js';
import { RecordingAdapter } from '../../helpers/recording-adapter.js';
import { startToolServer, type ToolServer } from '../../helpers/tool-server.js';
import { appMention, asJson, envelope, postToSlack, signingSecret } from '../../unit/slack/payloads.js';
import { botUserId, freshTs } from '../slack/slack-butler.js';

/**
 * `GET /metrics` on the running Butler: a console conversation (turns, tokens, an approval parked and
 * decided, the inbox while a turn runs), scheduled tasks, and Slack against the fake Web API (calls per method,
 * a 429).
 */

let model: FakeModelServer;
let slack: FakeSlackApi;
let tools: ToolServer;
let mcp: McpHttpTestServer;
let terminal: RecordingAdapter;
let app: TestButler;
let thread = 0;

const ana = { id: 'ana', name: 'Ana' };
const olga = { id: 'olga', name: 'Olga' };

beforeAll(async () => {
  model = await startFakeModelServer();
  slack = await startFakeSlackApi();
  tools = await startToolServer();
  mcp = await startMcpHttpServer();
  terminal = new RecordingAdapter();
  // Slack's first call is auth.test at start: it is answered 429 once, then retried.
  slack.failNext('auth.test', { rateLimitedSeconds: 0 });
  app = await startTestButler({
    env: {
      BUTLER_BASE_URL: model.baseUrl,
      BUTLER_MODEL: 'test-model',
      SLACK_BOT_TOKEN: 'xoxb-metrics',
      SLACK_SIGNING_SECRET: signingSecret,
      SLACK_API_URL: slack.url,
    },
    config: {
      approvers: { console: ['olga'], slack: ['U0APPROVER'] },
      tools: serviceTools(tools),
      mcpServers: [
        { name: 'records', url: mcp.url, tools: { include: ['lookup'] } },
        // Nothing listens on the discard port: this server stays down.
        { name: 'unreachable', url: 'http://127.0.0.1:9/mcp', connectTimeoutMs: 1_000 },
      ],
    },
    adapters: [terminal],
  });
});
afterAll(async () => {
  await app?.close();
  await model.close();
  await slack.close();
  await tools.close();
  await mcp.stop();
});

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a Prometheus text page (format 0.0.4: `name{label="value",…} number`). */
function parse(page: string): Sample[] {
  return page
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
      if (!match) throw new Error(`not a sample line: ${line}`);
      const labels = Object.fromEntries(
        [...(match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map((pair) => [
          pair[1],
          pair[2],
        ]),
      );
      return { name: match[1] ?? '', labels, value: Number(match[3]) };
    });
}

async function scrape(): Promise<{ samples: Sample[]; contentType: string | null }> {
  const response = await fetch(`${app.url}/metrics`);
  expect(response.status).toBe(200);
  return { samples: parse(await response.text()), contentType: response.headers.get('content-type') };
}

/** The value of the one sample with exactly these labels; undefined when there is none. */
function value(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const wanted = JSON.stringify(Object.entries(labels).sort());
  return samples.find(
    (sample) => sample.name === name && JSON.stringify(Object.entries(sample.labels).sort()) === wanted,
  )?.value;
}

function newAddress() {
  thread += 1;
  return { platform: 'console' as const, workspace: 'local', channel: 'ops', thread: `t${thread}` };
}

describe(`GET /metrics on ${databaseKind}`, () => {
  it('counts a turn with its outcome and the model tokens, and shows the inbox while a turn runs', async () => {
    let answer: () => void = () => {};
    const answered = new Promise<void>((resolve) => {
      answer = resolve;
    });
    model.enqueue(async () => {
      await answered;
      return { text: 'Hello.', usage: { promptTokens: 120, completionTokens: 7 } };
    });
    await app.butler.service.accept(inboundMessage({ text: 'hi', address: newAddress(), user: ana }));
    await model.waitForRequests(1);

    const running = await scrape();
    expect(running.contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(value(running.samples, 'butler_database_up')).toBe(1);
    expect(value(running.samples, 'butler_inbox_open_events')).toBe(1);
    expect(value(running.samples, 'butler_inbox_oldest_open_event_age_seconds')).toBeGreaterThanOrEqual(0);

    answer();
    await app.settle();
    const { samples } = await scrape();
    expect(value(samples, 'butler_inbox_open_events')).toBe(0);
    expect(value(samples, 'butler_inbox_oldest_open_event_age_seconds')).toBe(0);
    expect(
      value(samples, 'butler_turns_total', {
        platform: 'console',
        workspace: 'local',
        trigger: 'message',
        outcome: 'replied',
      }),
    ).toBe(1);
    expect(
      value(samples, 'butler_turn_duration_seconds_count', { platform: 'console', outcome: 'replied' }),
    ).toBe(1);
    const chat = { model: 'test-model', purpose: 'chat' };
    expect(value(samples, 'butler_model_tokens_total', { ...chat, kind: 'prompt' })).toBe(120);
    expect(value(samples, 'butler_model_tokens_total', { ...chat, kind: 'completion' })).toBe(7);
    expect(value(samples, 'butler_model_request_duration_seconds_count', { ...chat, outcome: 'ok' })).toBe(1);
    // prom-client's process metrics, on Butler's own registry.
    for (const name of [
      'process_cpu_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_eventloop_lag_seconds',
    ])
      expect(value(samples, name), name).toBeGreaterThanOrEqual(0);
  });

  it('shows an approval waiting while the turn is parked, and none once it is decided', async () => {
    model.enqueue({
      toolCalls: [{ id: 'call_restart', name: 'restart_service', arguments: '{"service":"api"}' }],
    });
    await app.butler.service.accept(
      inboundMessage({ text: 'restart api', address: newAddress(), user: ana }),
    );
    await app.settle();
    const parked = (await scrape()).samples;
    expect(value(parked, 'butler_approvals_waiting')).toBe(1);
    expect(value(parked, 'butler_approvals_requested_total', { risk: 'high' })).toBe(1);
    expect(
      value(parked, 'butler_turns_total', {
        platform: 'console',
        workspace: 'local',
        trigger: 'message',
        outcome: 'parked',
      }),
    ).toBe(1);

    const approvalId = terminal.lastCard().card.calls[0]?.approvalId ?? '';
    model.enqueue({ text: 'Restarted api.' });
    const decided = await app.butler.service.decide({
      approvalId,
      platform: 'console',
      user: olga,
      decision: 'approve',
    });
    expect(decided).toMatchObject({ ok: true });
    await app.settle();
    const { samples } = await scrape();
    expect(value(samples, 'butler_approvals_waiting')).toBe(0);
    expect(value(samples, 'butler_approvals_decided_total', { risk: 'high', decision: 'approve' })).toBe(1);
    expect(value(samples, 'butler_tool_calls_total', { tool: 'restart_service', decision: 'approved' })).toBe(
      1,
    );
    expect(
      value(samples, 'butler_turns_total', {
        platform: 'console',
        workspace: 'local',
        trigger: 'resume',
        outcome: 'replied',
      }),
    ).toBe(1);
  });

  it('shows scheduled tasks by status, across the database', async () => {
    const before = (await scrape()).samples;
    const active = value(before, 'butler_scheduled_tasks', { status: 'active' }) ?? Number.NaN;
    const pausedBefore = value(before, 'butler_scheduled_tasks', { status: 'paused' }) ?? Number.NaN;
    const { schedule } = await app.butler.schedules.create({
      creator: { platform: 'console', ...ana },
      address: newAddress(),
      prompt: 'Post the weekly digest',
      cron: '0 9 * * 1',
      timezone: 'Europe/Berlin',
      isDirect: false,
      source: 'chat',
    });
    expect(value((await scrape()).samples, 'butler_scheduled_tasks', { status: 'active' })).toBe(active + 1);
    await app.butler.schedules.pause(schedule.id, { admin: true, name: 'test' });
    const paused = (await scrape()).samples;
    expect(value(paused, 'butler_scheduled_tasks', { status: 'active' })).toBe(active);
    expect(value(paused, 'butler_scheduled_tasks', { status: 'paused' })).toBe(pausedBefore + 1);
    await app.butler.schedules.cancel(schedule.id, { admin: true, name: 'test' });
  });

  it('counts Slack Web API calls per method, a 429 as rate_limited', async () => {
    model.enqueue({ text: 'Hi from Slack.' });
    await postToSlack(
      `${app.url}/slack/events`,
      asJson(envelope(appMention({ ts: freshTs(), text: `<@${botUserId}> hello` }))),
    );
    await app.settle();
    const { samples } = await scrape();
    expect(
      value(samples, 'butler_platform_api_calls_total', {
        platform: 'slack',
        method: 'auth.test',
        outcome: 'rate_limited',
      }),
    ).toBe(1);
    expect(
      value(samples, 'butler_platform_api_calls_total', {
        platform: 'slack',
        method: 'auth.test',
        outcome: 'ok',
      }),
    ).toBe(1);
    // Method by method, what the fake Slack received (the 429 included); a name lookup may still be finishing.
    const received = () => {
      const byMethod: Record<string, number> = {};
      for (const call of slack.calls) byMethod[call.method] = (byMethod[call.method] ?? 0) + 1;
      return byMethod;
    };
    const counted = async () => {
      const byMethod: Record<string, number> = {};
      for (const sample of (await scrape()).samples)
        if (sample.name === 'butler_platform_api_calls_total' && sample.labels.platform === 'slack') {
          const method = sample.labels.method ?? '';
          byMethod[method] = (byMethod[method] ?? 0) + sample.value;
        }
      return byMethod;
    };
    const same = (left: Record<string, number>, right: Record<string, number>) =>
      JSON.stringify(Object.entries(left).sort()) === JSON.stringify(Object.entries(right).sort());
    await expect.poll(async () => same(await counted(), received())).toBe(true);
    expect(await counted()).toEqual(received());
    expect(Object.keys(received())).toEqual(expect.arrayContaining(['auth.test', 'chat.stopStream']));
  });

  it('shows whether each MCP server is connected', async () => {
    const { samples } = await scrape();
    expect(value(samples, 'butler_mcp_server_up', { server: 'records' })).toBe(1);
    expect(value(samples, 'butler_mcp_server_up', { server: 'unreachable' })).toBe(0);
  });

  it('labels series only with bounded values: no conversations, users, arguments or secrets', async () => {
    const { samples } = await scrape();
    const labelsOf = new Map<string, Set<string>>();
    for (const sample of samples.filter((entry) => entry.name.startsWith('butler_'))) {
      const names = labelsOf.get(sample.name) ?? new Set<string>();
      for (const label of Object.keys(sample.labels)) names.add(label);
      labelsOf.set(sample.name, names);
    }
    const allowed = new Set([
      'platform',
      // Bounded: past maxWorkspaceLabels workspaces, "(other)".
      'workspace',
      'trigger',
      'outcome',
      'model',
      'purpose',
      'kind',
      'tool',
      'decision',
      'risk',
      'method',
      'server',
      'status',
      'way',
      'le',
    ]);
    for (const [name, labels] of labelsOf)
      for (const label of labels) expect(allowed.has(label), `${name}{${label}}`).toBe(true);
    const page = await (await fetch(`${app.url}/metrics`)).text();
    const personal = [
      '"ana"',
      '"olga"',
      'console:local:ops',
      'restart api',
      '"service"',
      'call_restart',
      'weekly digest',
    ];
    for (const text of [...personal, 'xoxb-metrics', signingSecret])
      expect(page.includes(text), text).toBe(false);
  });
});
