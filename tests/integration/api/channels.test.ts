import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestButler, type TestButler, type TestButlerOptions } from '../../helpers/butler-app.js';
import { databaseKind, testDatabaseUrl } from '../../helpers/database.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { type FakeSlackApi, shownText, startFakeSlackApi } from '../../helpers/fake-slack-api.js';
import { serviceTools } from '../../helpers/platform-butler.js';
import { readEvents, type SseEvent } from '../../helpers/sse-client.js';
import { startToolServer, type ToolServer } from '../../helpers/tool-server.js';
import {
  appMention,
  asForm,
  asJson,
  blockActions,
  envelope,
  postToSlack,
  signingSecret,
} from '../../unit/slack/payloads.js';
import { freshTs } from '../slack/slack-butler.js';

/**
 * The API beside a chat platform: an approval asked in Slack decided by an API approver (the card follows),
 * and the live event stream, across two processes on one Postgres.
 */

const oncallKey = 'oncall-key-0123456789abcdef';

let slack: FakeSlackApi;
let model: FakeModelServer;
let tools: ToolServer;

beforeAll(async () => {
  slack = await startFakeSlackApi();
  model = await startFakeModelServer();
  tools = await startToolServer();
});
afterAll(async () => {
  await tools.close();
  await model.close();
  await slack.close();
});

function options(databaseUrl?: string): TestButlerOptions {
  return {
    env: {
      SLACK_BOT_TOKEN: 'xoxb-api',
      SLACK_SIGNING_SECRET: signingSecret,
      SLACK_API_URL: slack.url,
      BUTLER_BASE_URL: model.baseUrl,
      BUTLER_MODEL: 'test-model',
    },
    config: {
      approvers: { slack: ['U0APPROVER'], api: ['oncall'] },
      tools: serviceTools(tools),
      api: { keys: [{ name: 'oncall', key: oncallKey, scopes: ['chat', 'approve', 'read'] }] },
    },
    ...(databaseUrl ? { databaseUrl } : {}),
  };
}

const authorized = { authorization: `Bearer ${oncallKey}`, 'content-type': 'application/json' };

/** Follows GET /api/v1/events until `enough` says so. */
function liveEvents(app: TestButler, enough: (events: SseEvent[]) => boolean) {
  const controller = new AbortController();
  const events = fetch(`${app.url}/api/v1/events`, { headers: authorized, signal: controller.signal }).then(
    (response) => readEvents(response, (_event, all) => enough(all)),
  );
  return { events, stop: () => controller.abort() };
}

/** Alice asks Butler in Slack for a restart; the card is posted and the turn parks. */
async function askInSlack(app: TestButler) {
  model.enqueue({
    toolCalls: [
      { id: `call_${Date.now()}`, name: 'restart_service', arguments: '{"service":"payments-api"}' },
    ],
  });
  const threadTs = freshTs();
  await postToSlack(
    `${app.url}/slack/events`,
    asJson(envelope(appMention({ ts: threadTs, text: '<@U0BUTLER> restart payments-api' }))),
  );
  await app.settle();
  const card = slack
    .threadMessages('C0GENERAL', threadTs)
    .find((message) => JSON.stringify(message.blocks ?? '').includes('butler_approve'));
  const approvalId = /"value":"([0-9a-f-]{36})"/.exec(JSON.stringify(card?.blocks))?.[1];
  if (!card || !approvalId) throw new Error('no approval card');
  return { threadTs, card, approvalId };
}

describe(`the API beside Slack on ${databaseKind}`, () => {
  it('lets an API approver decide a request asked in Slack; the Slack card shows it; the events stream tells', async () => {
    const app = await startTestButler(options());
    try {
      const live = liveEvents(app, (all) =>
        all.some((event) => event.data.type === 'turn_finished' && event.data.status === 'replied'),
      );
      await new Promise((resolve) => setTimeout(resolve, 200));
      const { threadTs, card, approvalId } = await askInSlack(app);
      model.enqueue({ text: 'payments-api restarted.' });
      const decided = await fetch(`${app.url}/api/v1/approvals/${approvalId}/decision`, {
        method: 'POST',
        headers: authorized,
        body: JSON.stringify({ decision: 'approve' }),
      });
      expect(decided.status).toBe(200);
      const updated = slack.callsTo('chat.update').filter((call) => call.args.ts === card.ts);
      expect(JSON.stringify(updated[0]?.args)).toContain('Approved by');
      await app.settle();
      expect(tools.requests.map((request) => request.path)).toEqual(['/restart_service']);
      expect(slack.threadMessages('C0GENERAL', threadTs).map(shownText)).toContain('payments-api restarted.');

      const events = await live.events;
      const seen = events.map((event) => event.data.type);
      expect(seen).toEqual(
        expect.arrayContaining(['turn_started', 'approval_requested', 'turn_finished', 'approval_decided']),
      );
      expect(events.find((event) => event.data.type === 'approval_decided')?.data).toMatchObject({
        approvalId,
        decidedBy: 'oncall',
        toolName: 'restart_service',
      });
      expect(JSON.stringify(events)).not.toContain('payments-api');
    } finally {
      await app.close();
    }
  });

  it('counts an API approver toward a two-person quorum: the Slack card shows it, a Slack click completes it', async () => {
    const base = options();
    const app = await startTestButler({
      ...base,
      config: { ...base.config, approvalPolicy: { quorum: { high: 2 } } },
    });
    try {
      tools.requests.length = 0;
      const { threadTs, card, approvalId } = await askInSlack(app);
      const counted = await fetch(`${app.url}/api/v1/approvals/${approvalId}/decision`, {
        method: 'POST',
        headers: authorized,
        body: JSON.stringify({ decision: 'approve' }),
      });
      expect(counted.status).toBe(200);
      expect(await counted.json()).toEqual({
        ok: true,
        status: 'pending',
        message: 'Your approval is counted: it waits for another approver.',
      });
      const updates = () => slack.callsTo('chat.update').filter((call) => call.args.ts === card.ts);
      expect(JSON.stringify(updates().at(-1)?.args)).toContain('1 of 2 approvals: oncall');
      expect(tools.requests).toEqual([]);

      model.enqueue({ text: 'payments-api restarted.' });
      const click = blockActions({ approvalId, actionId: 'butler_approve', messageTs: card.ts, threadTs });
      expect((await postToSlack(`${app.url}/slack/events`, asForm(click))).status).toBe(200);
      await app.settle();
      expect(tools.requests.map((request) => request.path)).toEqual(['/restart_service']);
      expect(JSON.stringify(updates().at(-1)?.args)).toContain('Approved by');
      expect(await app.butler.store.approvals.get(approvalId)).toMatchObject({
        status: 'approved',
        votes: [
          expect.objectContaining({ platform: 'api', id: 'oncall' }),
          expect.objectContaining({ platform: 'slack', id: 'U0APPROVER' }),
        ],
      });
    } finally {
      await app.close();
    }
  });

  it.skipIf(!testDatabaseUrl)(
    'streams events of a turn another process runs (Postgres LISTEN/NOTIFY)',
    async () => {
      const first = await startTestButler(options());
      const second = await startTestButler(options(first.databaseUrl));
      try {
        await second.butler.worker.stop(1_000);
        const live = liveEvents(second, (all) => all.some((event) => event.data.type === 'turn_finished'));
        await new Promise((resolve) => setTimeout(resolve, 300));
        model.enqueue({ text: 'Hello from the first process.' });
        await postToSlack(
          `${first.url}/slack/events`,
          asJson(envelope(appMention({ ts: freshTs(), text: '<@U0BUTLER> hello' }))),
        );
        await first.settle();
        const events = await live.events;
        expect(events.map((event) => event.data.type)).toEqual(['turn_started', 'turn_finished']);
      } finally {
        await second.close();
        await first.close();
      }
    },
  );
});
