import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TestButler } from '../../helpers/butler-app.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { type FakeSlackApi, startFakeSlackApi } from '../../helpers/fake-slack-api.js';
import { captureLogs } from '../../helpers/log-capture.js';
import { storedEvents } from '../../helpers/platform-butler.js';
import { startToolServer, type ToolServer } from '../../helpers/tool-server.js';
import {
  appMention,
  asForm,
  asJson,
  blockActions,
  clickFrom,
  envelopeFor,
  postToSlack,
} from '../../unit/slack/payloads.js';
import { freshTs, startSlackButler } from './slack-butler.js';

// One bot token is one installation (T0BUTLER). Slack delivers only what the app's installations produce,
// but a payload can still name another workspace: an org-wide app, a Slack Connect click, a second
// workspace's event while its installation is being set up. None of it may reach the model, a tool, a card
// or Slack's Web API, and Slack must not retry it.
const other = 'T0OTHER';

let fake: FakeSlackApi;
let model: FakeModelServer;
let tools: ToolServer;
let app: TestButler;
let slackUrl: string;
const logs = captureLogs();

beforeAll(async () => {
  fake = await startFakeSlackApi();
  model = await startFakeModelServer();
  tools = await startToolServer();
  app = await startSlackButler(fake, model, tools, { logLevel: 'warn', logDestination: logs.stream });
  slackUrl = `${app.url}/slack/events`;
});
afterAll(async () => {
  await app?.close();
  await model.close();
  await tools.close();
  await fake.close();
});
beforeEach(() => {
  fake.reset();
  model.reset();
  tools.requests.length = 0;
  logs.clear();
});

/** The same mention (channel, ts, user) as it would come from `team`. */
const mentionFrom = (team: string, ts: string, text = '<@U0BUTLER> restart payments-api') =>
  envelopeFor(team, appMention({ ts, text }));

describe('Slack payloads for a workspace Butler is not installed in', () => {
  it('acknowledges an event with 200 and does nothing with it, logging the workspace once', async () => {
    const before = await storedEvents(app);
    for (const ts of [freshTs(), freshTs()]) {
      const response = await postToSlack(slackUrl, asJson(mentionFrom(other, ts)));
      expect(response.status).toBe(200);
    }
    await app.settle();
    expect(await storedEvents(app)).toBe(before);
    expect(model.requests).toHaveLength(0);
    expect(fake.calls).toHaveLength(0);
    const warned = logs.warnings().filter((line) => line.team === other);
    expect(warned).toHaveLength(1);
    expect(warned[0]?.msg).toContain('not installed');
  });

  it('refuses a click from the other workspace on a real card; the installed workspace decides it', async () => {
    const approvalCall = {
      id: `call_${Date.now()}`,
      name: 'restart_service',
      arguments: '{"service":"api"}',
    };
    model.enqueue({ toolCalls: [approvalCall] });
    const threadTs = freshTs();
    await postToSlack(slackUrl, asJson(mentionFrom('T0BUTLER', threadTs)));
    await app.settle();
    const card = fake
      .callsTo('chat.postMessage')
      .find((call) => JSON.stringify(call.args.blocks ?? '').includes('butler_approve'));
    const approvalId = JSON.stringify(card?.args.blocks).match(/"value":"([0-9a-f-]{36})"/)?.[1] ?? '';
    const cardTs =
      [...fake.messages.values()].find((message) => message.blocks === card?.args.blocks)?.ts ?? '';
    expect(approvalId).not.toBe('');

    // The same approver id, from the other workspace: acknowledged, and nothing decided.
    const forged = clickFrom(other, { approvalId, actionId: 'butler_approve', messageTs: cardTs, threadTs });
    expect((await postToSlack(slackUrl, asForm(forged))).status).toBe(200);
    await app.settle();
    expect(tools.requests).toHaveLength(0);
    expect(fake.callsTo('chat.update')).toHaveLength(0);
    expect(fake.callsTo('chat.postEphemeral')).toHaveLength(0);

    model.enqueue({ text: 'Restarted.' });
    const real = blockActions({ approvalId, actionId: 'butler_approve', messageTs: cardTs, threadTs });
    expect((await postToSlack(slackUrl, asForm(real))).status).toBe(200);
    await fake.waitFor(() => fake.callsTo('chat.update')[0]);
    await app.settle();
    expect(tools.requests).toHaveLength(1);
  });
});
