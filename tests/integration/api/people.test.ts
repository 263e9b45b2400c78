import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TestButler } from '../../helpers/butler-app.js';
import { databaseKind } from '../../helpers/database.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { type FakeSlackApi, startFakeSlackApi } from '../../helpers/fake-slack-api.js';
import { startToolServer, type ToolServer } from '../../helpers/tool-server.js';
import {
  appMention,
  asForm,
  asJson,
  blockActions,
  envelope,
  postToSlack,
} from '../../unit/slack/payloads.js';
import { freshTs, startSlackButler } from '../slack/slack-butler.js';

/**
 * One person across Slack and the HTTP API (`people:`), through the real paths: a signed Slack click, the
 * decision endpoint, Slack mentions answered by the scripted model. Olga is Slack's U0OLGA and the API key
 * olga: her click and her key are one approval of a two-person quorum, and the task her key made is hers on
 * Slack.
 */

const olgaKey = 'olga-people-key-0123456789abcdef';
const olga = { id: 'U0OLGA', name: 'olga' };
const pat = { id: 'U0PAT', name: 'pat' };

let slack: FakeSlackApi;
let model: FakeModelServer;
let tools: ToolServer;
let app: TestButler;
let slackUrl: string;

beforeAll(async () => {
  slack = await startFakeSlackApi();
  model = await startFakeModelServer();
  tools = await startToolServer();
  app = await startSlackButler(slack, model, tools, {
    env: { OLGA_KEY: olgaKey },
    config: {
      approvers: { slack: [olga.id, pat.id] },
      approvalPolicy: { quorum: { high: 2 } },
      api: { keys: [{ name: 'olga', key: `\${OLGA_KEY}`, scopes: ['chat', 'approve'] }] },
      people: [{ name: 'olga', slack: olga.id, api: 'olga' }],
    },
  });
  slackUrl = `${app.url}/slack/events`;
});
afterAll(async () => {
  await app?.close();
  await tools.close();
  await model.close();
  await slack.close();
});
beforeEach(() => {
  slack.reset();
  model.reset();
  tools.requests.length = 0;
});

const asOlga = { authorization: `Bearer ${olgaKey}`, 'content-type': 'application/json' };

/** Someone mentions Butler in a new Slack thread; the model answers with `calls`, then with `text`. */
async function mention(user: string, text: string, calls: Array<{ name: string; arguments: unknown }>) {
  model.enqueue(
    {
      toolCalls: calls.map((call, index) => ({
        id: `call_${Date.now()}_${index}`,
        name: call.name,
        arguments: JSON.stringify(call.arguments),
      })),
    },
    { text: 'Done.' },
  );
  const threadTs = freshTs();
  await postToSlack(
    slackUrl,
    asJson(envelope(appMention({ ts: threadTs, user, text: `<@U0BUTLER> ${text}` }))),
  );
  await app.settle();
  return threadTs;
}

/** Alice asks for a restart in Slack: the high-risk call waits on a card for two approvers. */
async function restartAskedInSlack() {
  const threadTs = await mention('U0ALICE', 'restart payments-api', [
    { name: 'restart_service', arguments: { service: 'payments-api' } },
  ]);
  const card = slack
    .threadMessages('C0GENERAL', threadTs)
    .find((message) => JSON.stringify(message.blocks ?? '').includes('butler_approve'));
  const approvalId = /"value":"([0-9a-f-]{36})"/.exec(JSON.stringify(card?.blocks))?.[1];
  if (!card?.ts || !approvalId) throw new Error('no approval card');
  return { threadTs, cardTs: card.ts, approvalId };
}

const click = (approvalId: string, cardTs: string, threadTs: string, user: { id: string; name: string }) =>
  postToSlack(
    slackUrl,
    asForm(blockActions({ approvalId, actionId: 'butler_approve', messageTs: cardTs, threadTs, user })),
  );

describe(`one person on Slack and the API (${databaseKind})`, () => {
  it("counts olga's Slack click and her API key as one approval; another person completes the quorum", async () => {
    const { threadTs, cardTs, approvalId } = await restartAskedInSlack();
    expect((await click(approvalId, cardTs, threadTs, olga)).status).toBe(200);
    await app.settle();

    const byHerKey = await fetch(`${app.url}/api/v1/approvals/${approvalId}/decision`, {
      method: 'POST',
      headers: asOlga,
      body: JSON.stringify({ decision: 'approve' }),
    });
    expect(byHerKey.status).toBe(403);
    expect(await byHerKey.json()).toMatchObject({
      error: 'not_authorized',
      message: expect.stringContaining('You approved it already, as slack U0OLGA'),
    });
    await app.settle();
    expect(tools.requests).toHaveLength(0);
    const waiting = await app.butler.store.approvals.get(approvalId);
    expect(waiting?.status).toBe('pending');
    expect(waiting?.votes.map((vote) => vote.id)).toEqual([olga.id]);

    expect((await click(approvalId, cardTs, threadTs, pat)).status).toBe(200);
    await app.settle();
    expect(tools.requests.map((request) => request.path)).toEqual(['/restart_service']);
    const decided = await app.butler.store.approvals.get(approvalId);
    expect(decided?.status).toBe('approved');
    expect(decided?.votes.map((vote) => vote.id)).toEqual([olga.id, pat.id]);
  });

  it('lets olga cancel on Slack the task her API key made, and nobody else who is not an approver', async () => {
    const created = await fetch(`${app.url}/api/v1/schedules`, {
      method: 'POST',
      headers: asOlga,
      body: JSON.stringify({ conversationId: 'reminders', prompt: 'Post the digest', cron: '0 9 * * 1-5' }),
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };

    await mention('U0ALICE', `cancel task ${id}`, [{ name: 'cancel_task', arguments: { id } }]);
    expect((await app.butler.schedules.get(id))?.status).toBe('active');
    expect(JSON.stringify(model.requests[1]?.messages.find((message) => message.role === 'tool'))).toContain(
      'Only the person who made this task',
    );

    model.reset();
    await mention(olga.id, `cancel task ${id}`, [{ name: 'cancel_task', arguments: { id } }]);
    const cancelled = await app.butler.schedules.get(id);
    expect(cancelled?.status).toBe('cancelled');
    expect(cancelled?.statusNote).toBe(`cancelled by ${olga.id}`);
    // Her own task: the answer quotes its prompt back to her.
    expect(JSON.stringify(model.requests[1]?.messages.find((message) => message.role === 'tool'))).toContain(
      `Cancelled task ${id} (\\"Post the digest\\")`,
    );
  });
});
