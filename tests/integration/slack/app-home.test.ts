import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TestButler } from '../../helpers/butler-app.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { type FakeSlackApi, startFakeSlackApi } from '../../helpers/fake-slack-api.js';
import type { PublishedHome } from '../../helpers/fake-slack-home.js';
import { startToolServer, type ToolServer } from '../../helpers/tool-server.js';
import { appMention, asForm, asJson, envelope, postToSlack, team } from '../../unit/slack/payloads.js';
import { freshTs, startSlackButler } from './slack-butler.js';

/**
 * Slack's App Home through the running Butler (real Bolt, the fake Slack's strict views.publish): the Home
 * tab lists a person's pending requests, and its buttons decide through the same core path as card clicks.
 */

let fake: FakeSlackApi;
let model: FakeModelServer;
let tools: ToolServer;
let app: TestButler;
let slackUrl: string;

beforeAll(async () => {
  fake = await startFakeSlackApi();
  model = await startFakeModelServer();
  tools = await startToolServer();
  app = await startSlackButler(fake, model, tools);
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
});

const approver = { id: 'U0APPROVER', name: 'olga' };
const requester = { id: 'U0ALICE', name: 'alice' };

/** Alice asks in #general; the model wants restart_service (high risk); Butler posts a card and parks. */
async function requestRestart(): Promise<{ cardTs: string; approvalId: string }> {
  model.enqueue({
    toolCalls: [
      { id: `call_${Date.now()}`, name: 'restart_service', arguments: '{"service":"payments-api"}' },
    ],
  });
  const ts = freshTs();
  await postToSlack(
    slackUrl,
    asJson(envelope(appMention({ ts, user: requester.id, text: '<@U0BUTLER> restart payments-api' }))),
  );
  await app.settle();
  const card = [...fake.messages.values()].find((message) =>
    JSON.stringify(message.blocks ?? []).includes('butler_approve'),
  );
  const approvalId = JSON.stringify(card?.blocks).match(/"value":"([0-9a-f-]{36})"/)?.[1];
  if (!card || !approvalId) throw new Error('no approval card was posted');
  return { cardTs: card.ts, approvalId };
}

/** `user` opens Butler's Home tab; resolves with the view published for them after it. */
async function openHome(user: string): Promise<PublishedHome> {
  const before = fake.home.published.length;
  const event = { type: 'app_home_opened', user, channel: 'D0HOME', tab: 'home', event_ts: freshTs() };
  const response = await postToSlack(slackUrl, asJson(envelope(event)));
  expect(response.status).toBe(200);
  return fake.waitFor(() => fake.home.published.slice(before).find((view) => view.userId === user));
}

/** A click on a Home tab button, as Slack sends it: the container is the clicker's home view. */
function homeClick(view: PublishedHome, actionId: string, value: string, user = approver) {
  return {
    type: 'block_actions',
    user: { id: user.id, username: user.name, name: user.name, team_id: team },
    api_app_id: 'A0BUTLER',
    token: 'legacy-verification-token',
    container: { type: 'view', view_id: view.id },
    trigger_id: '1337.42.abcdef',
    team: { id: team, domain: 'butler-test' },
    enterprise: null,
    is_enterprise_install: false,
    view: { ...view.view, id: view.id, team_id: team, app_id: 'A0BUTLER', state: { values: {} } },
    actions: [
      {
        action_id: actionId,
        block_id: `butler_home_${value}`,
        text: { type: 'plain_text', text: 'Approve', emoji: true },
        value,
        type: 'button',
        action_ts: '1700000001.000000',
      },
    ],
  };
}

const buttonsOf = (view: PublishedHome) =>
  view.view.blocks
    .filter((block) => block.type === 'actions')
    .flatMap((block) => block.elements as unknown[]);

describe('Slack App Home', () => {
  it('lists a pending request with its buttons; approving there runs the tool once and republishes the tab', async () => {
    const { cardTs, approvalId } = await requestRestart();
    const home = await openHome(approver.id);
    expect(home.view.type).toBe('home');
    expect(JSON.stringify(home.view.blocks)).toContain('restart_service');
    expect(JSON.stringify(home.view.blocks)).toContain('payments-api');
    expect(buttonsOf(home)).toEqual([
      expect.objectContaining({ action_id: 'butler_home_approve', value: approvalId }),
      expect.objectContaining({ action_id: 'butler_home_reject', value: approvalId }),
    ]);

    model.enqueue({ text: 'payments-api restarted.' });
    const published = fake.home.published.length;
    const response = await postToSlack(slackUrl, asForm(homeClick(home, 'butler_home_approve', approvalId)));
    expect(response.status).toBe(200);
    const after = await fake.waitFor(() => fake.home.published[published]);
    await app.settle();

    expect(tools.requests).toHaveLength(1);
    expect(after.userId).toBe(approver.id);
    expect(JSON.stringify(after.view.blocks)).toContain('restart_service` approved');
    expect(JSON.stringify(after.view.blocks)).not.toContain(approvalId);
    expect(buttonsOf(after)).toHaveLength(0);
    // The card in the channel shows the decision too, and the turn went on in its thread.
    const cardUpdate = fake.callsTo('chat.update').find((call) => call.args.ts === cardTs);
    expect(JSON.stringify(cardUpdate?.args.blocks)).toContain('Approved by olga');
    expect(JSON.stringify(cardUpdate?.args.blocks)).not.toContain('butler_approve');

    // A second click (a stale tab) changes nothing.
    const again = fake.home.published.length;
    await postToSlack(slackUrl, asForm(homeClick(home, 'butler_home_approve', approvalId)));
    const stale = await fake.waitFor(() => fake.home.published[again]);
    await app.settle();
    expect(tools.requests).toHaveLength(1);
    expect(JSON.stringify(stale.view.blocks)).toContain('already approved by olga');
  });

  it('shows the requester their request without buttons, and a home button outside a home tab decides nothing', async () => {
    const { cardTs, approvalId } = await requestRestart();
    const home = await openHome(requester.id);
    expect(JSON.stringify(home.view.blocks)).toContain('restart_service');
    expect(JSON.stringify(home.view.blocks)).toContain('you may not decide this one');
    expect(buttonsOf(home)).toHaveLength(0);
    // Their recent conversation is listed with the first line of what they wrote.
    expect(JSON.stringify(home.view.blocks)).toContain('restart payments-api');

    // Home buttons are read only from a home view: the same action in a message is refused.
    const inMessage = {
      ...homeClick(home, 'butler_home_approve', approvalId),
      container: { type: 'message', message_ts: cardTs, channel_id: 'C0GENERAL', is_ephemeral: false },
      view: undefined,
    };
    const response = await postToSlack(slackUrl, asForm(inMessage));
    expect(response.status).toBe(200);
    const stillPending = await openHome(approver.id);
    expect(buttonsOf(stillPending)).toContainEqual(expect.objectContaining({ value: approvalId }));
    expect(tools.requests).toHaveLength(0);
  });

  it('publishes a page for someone with nothing waiting, and nothing for the Messages tab', async () => {
    const home = await openHome('U0NEWCOMER');
    expect(JSON.stringify(home.view.blocks)).toContain('Nothing waits for you.');
    expect(JSON.stringify(home.view.blocks)).toContain('restart_service');
    const messagesTab = { type: 'app_home_opened', user: 'U0NEWCOMER', channel: 'D0HOME', tab: 'messages' };
    const published = fake.home.published.length;
    await postToSlack(slackUrl, asJson(envelope(messagesTab)));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(fake.home.published).toHaveLength(published);
  });
});
