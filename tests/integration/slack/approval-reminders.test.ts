import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ageRequest, hour } from '../../helpers/approval-clock.js';
import type { TestButler } from '../../helpers/butler-app.js';
import { databaseKind } from '../../helpers/database.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { type FakeSlackApi, type RecordedCall, startFakeSlackApi } from '../../helpers/fake-slack-api.js';
import { startToolServer, type ToolServer } from '../../helpers/tool-server.js';
import { waitForAsync } from '../../helpers/wait-for.js';
import {
  appMention,
  asForm,
  asJson,
  blockActions,
  envelope,
  postToSlack,
} from '../../unit/slack/payloads.js';
import { freshTs, startSlackButler } from './slack-butler.js';

/**
 * Two-person approvals with a reminder and an escalation, through the running Butler with real Bolt and Web API
 * clients: the card waits in the channel's thread, the approvers who have not decided get it in their DM once,
 * the on-call once more, and a click on a DM copy (a signed block_actions on that message) decides the request.
 */

let fake: FakeSlackApi;
let model: FakeModelServer;
let tools: ToolServer;
let app: TestButler;
let slackUrl: string;

const olga = { id: 'U0APPROVER', name: 'olga' };
const pat = { id: 'U0PAT', name: 'pat' };
const oncall = { id: 'U0ONCALL', name: 'oncall' };

beforeAll(async () => {
  fake = await startFakeSlackApi();
  for (const person of [olga, pat, oncall]) fake.users.set(person.id, { name: person.name });
  model = await startFakeModelServer();
  tools = await startToolServer();
  app = await startSlackButler(fake, model, tools, {
    config: {
      approvers: { slack: [olga.id, pat.id, oncall.id] },
      approvalPolicy: {
        quorum: { high: 2 },
        remindAfter: '1h',
        escalateAfter: '2h',
        escalateTo: { slack: [oncall.id] },
      },
    },
  });
  slackUrl = `${app.url}/slack/events`;
});
afterAll(async () => {
  await app?.close();
  await Promise.all([model.close(), tools.close(), fake.close()]);
});
beforeEach(() => {
  fake.reset();
  model.reset();
  tools.requests.length = 0;
});

const isCard = (call: RecordedCall) => JSON.stringify(call.args.blocks ?? '').includes('butler_approve');
/** The approval cards posted in a channel (a DM is a `D…` channel), in order. */
const cardsIn = (channel: string) =>
  fake.callsTo('chat.postMessage').filter((call) => call.args.channel === channel && isCard(call));
/** The cards Butler posted at a DM's top level, as the fake keeps them (redrawn in place), oldest first. */
const dmCards = (channel: string) =>
  fake.threadMessages(channel, undefined).filter((message) => message.blocks !== undefined);
const updatesOf = (channel: string, ts: string) =>
  fake.callsTo('chat.update').filter((call) => call.args.channel === channel && call.args.ts === ts);
const shown = (call: RecordedCall | undefined) => JSON.stringify(call?.args.blocks ?? '');

function approvalIdOf(call: RecordedCall): string {
  const blocks = call.args.blocks as Array<{ type: string; elements?: Array<{ value?: string }> }>;
  const value = blocks.find((block) => block.type === 'actions')?.elements?.[0]?.value;
  if (!value) throw new Error('card without an approval id');
  return value;
}

const approve = (
  approvalId: string,
  where: { channel: string; messageTs: string; threadTs?: string },
  user: { id: string; name: string },
) => postToSlack(slackUrl, asForm(blockActions({ approvalId, actionId: 'butler_approve', user, ...where })));

describe(`Slack reminders and escalation of a two-person approval (${databaseKind})`, () => {
  it('DMs each approver still needed once, the on-call once more, and a click on a DM copy completes the quorum', async () => {
    model.enqueue({
      toolCalls: [{ id: `call_${freshTs()}`, name: 'restart_service', arguments: '{"service":"billing"}' }],
    });
    const threadTs = freshTs();
    await postToSlack(
      slackUrl,
      asJson(envelope(appMention({ ts: threadTs, text: '<@U0BUTLER> restart billing' }))),
    );
    // Olga approves before the reminder is due (the request is aged past it only then), so she is not reminded.
    const card = await fake.waitFor(() => cardsIn('C0GENERAL')[0]);
    expect(card.args.thread_ts).toBe(threadTs);
    const approvalId = approvalIdOf(card);
    // A click counts on the card Butler recorded as the request's: a person cannot click before that anyway.
    await waitForAsync(async () => (await app.butler.store.approvals.get(approvalId))?.cardMessageId);
    const cardTs = [...fake.messages.values()].find((message) => message.blocks === card.args.blocks)?.ts;
    const channelCard = { channel: 'C0GENERAL', messageTs: cardTs ?? '', threadTs };
    expect((await approve(approvalId, channelCard, olga)).status).toBe(200);
    const counted = await fake.waitFor(() => updatesOf('C0GENERAL', channelCard.messageTs)[0]);
    expect(shown(counted)).toContain('1 of 2 approvals: olga');
    const told = await fake.waitFor(() => fake.callsTo('chat.postEphemeral')[0]);
    expect(told.args).toMatchObject({
      channel: 'C0GENERAL',
      user: olga.id,
      text: 'Your approval is counted: it waits for another approver.',
    });
    expect(tools.requests).toHaveLength(0);

    // Pat and the on-call are reminded in their DMs; then the on-call gets the card again, escalated.
    await ageRequest(app.butler.database, approvalId, hour);
    await fake.waitFor(() => cardsIn('D0ONCALL').length === 1 && cardsIn('D0PAT').length === 1, 10_000);
    await ageRequest(app.butler.database, approvalId, hour);
    await fake.waitFor(() => cardsIn('D0ONCALL').length === 2, 10_000);
    // The channel's card is redrawn after the people are told: wait for it, however long that takes.
    await fake.waitFor(
      () => /escalated to oncall at/.test(shown(updatesOf('C0GENERAL', channelCard.messageTs).at(-1))),
      10_000,
    );
    await delay(800);
    expect(cardsIn('D0PAT')).toHaveLength(1);
    expect(cardsIn('D0ONCALL')).toHaveLength(2);
    expect(dmCards('D0PAT')).toHaveLength(1);
    expect(dmCards('D0ONCALL')).toHaveLength(2);
    expect(cardsIn('D0APPROVER')).toEqual([]);
    expect(fake.callsTo('conversations.open').map((call) => call.args.users)).toEqual([
      pat.id,
      oncall.id,
      oncall.id,
    ]);
    const notes = (channel: string) =>
      fake
        .callsTo('chat.postMessage')
        .filter((call) => call.args.channel === channel && !isCard(call))
        .map((call) => String(call.args.text));
    expect(notes('D0PAT')).toEqual([expect.stringMatching(/^A request in a conversation is waiting/)]);
    expect(notes('D0ONCALL')[1]).toMatch(/^Escalated to you: a request has waited/);
    // Every card sent is decidable, and sits at the DM's top level.
    for (const dmCard of [...cardsIn('D0PAT'), ...cardsIn('D0ONCALL')]) {
      expect(approvalIdOf(dmCard)).toBe(approvalId);
      expect(dmCard.args.thread_ts).toBeUndefined();
    }
    // The channel's card says who was told, by the names users.info gives.
    expect(shown(updatesOf('C0GENERAL', channelCard.messageTs).at(-1))).toMatch(
      /reminded pat, oncall at \d\d:\d\d UTC; escalated to oncall at \d\d:\d\d UTC/,
    );

    // A click naming the request, from a message that is neither its card nor a copy (Pat's reminder note).
    const noteTs = fake.threadMessages('D0PAT', undefined).find((message) => !message.blocks)?.ts ?? '';
    await approve(approvalId, { channel: 'D0PAT', messageTs: noteTs }, pat);
    const refused = await fake.waitFor(() => fake.callsTo('chat.postEphemeral')[1]);
    expect(refused.args).toMatchObject({
      channel: 'D0PAT',
      text: 'This button does not belong to this request.',
    });
    await app.settle();
    expect(tools.requests).toHaveLength(0);
    expect(await app.butler.store.approvals.get(approvalId)).toMatchObject({
      status: 'pending',
      votes: [expect.objectContaining({ id: olga.id })],
    });

    // Pat approves on the card in their DM: the second approval runs the call, once.
    const updatesBefore = updatesOf('C0GENERAL', channelCard.messageTs).length;
    const patCard = { channel: 'D0PAT', messageTs: dmCards('D0PAT')[0]?.ts ?? '' };
    model.enqueue({ text: 'billing restarted.' });
    expect((await approve(approvalId, patCard, pat)).status).toBe(200);
    const decided = await fake.waitFor(
      () => updatesOf('C0GENERAL', channelCard.messageTs).slice(updatesBefore)[0],
    );
    await app.settle();
    expect(tools.requests).toHaveLength(1);
    expect(shown(decided)).toContain('Approved by pat');
    expect(shown(decided)).not.toContain('butler_approve');
    // The DM copy clicked is redrawn by the click, the on-call's copies by the decision.
    expect(shown(updatesOf('D0PAT', patCard.messageTs).at(-1))).toContain('Approved by pat');
    for (const copy of dmCards('D0ONCALL'))
      expect(shown(updatesOf('D0ONCALL', copy.ts).at(-1))).toContain('Approved by pat');
    expect(await app.butler.store.approvals.get(approvalId)).toMatchObject({ status: 'approved' });
    // The turn goes on in the channel's thread.
    expect(fake.callsTo('chat.startStream').at(-1)?.args).toMatchObject({
      channel: 'C0GENERAL',
      thread_ts: threadTs,
    });

    // A later click on a copy runs nothing more, and says why.
    await approve(approvalId, { channel: 'D0ONCALL', messageTs: dmCards('D0ONCALL')[0]?.ts ?? '' }, oncall);
    const late = await fake.waitFor(() => fake.callsTo('chat.postEphemeral')[2]);
    expect(late.args).toMatchObject({
      channel: 'D0ONCALL',
      text: 'This request was already approved by pat.',
    });
    await app.settle();
    expect(tools.requests).toHaveLength(1);
  });

  it('opens the whole arguments from a DM copy too, as from the channel card, deciding nothing', async () => {
    const service = `svc-${'x'.repeat(5_000)}:end`;
    model.enqueue({
      toolCalls: [
        { id: `call_${freshTs()}`, name: 'restart_service', arguments: JSON.stringify({ service }) },
      ],
    });
    await postToSlack(
      slackUrl,
      asJson(envelope(appMention({ ts: freshTs(), text: '<@U0BUTLER> restart the long one' }))),
    );
    const card = await fake.waitFor(() => cardsIn('C0GENERAL')[0]);
    expect(shown(card)).toContain('butler_show_arguments');
    const approvalId = approvalIdOf(card);
    await ageRequest(app.butler.database, approvalId, hour);
    await fake.waitFor(() => dmCards('D0PAT')[0], 10_000);
    await postToSlack(
      slackUrl,
      asForm(
        blockActions({
          approvalId,
          actionId: 'butler_show_arguments',
          messageTs: dmCards('D0PAT')[0]?.ts ?? '',
          channel: 'D0PAT',
          user: pat,
        }),
      ),
    );
    const opened = await fake.waitFor(() => fake.callsTo('views.open')[0]);
    expect(JSON.stringify(opened.args.view)).toContain(':end');
    expect(fake.callsTo('chat.postEphemeral')).toEqual([]);
    await app.settle();
    expect(tools.requests).toHaveLength(0);
    expect((await app.butler.store.approvals.get(approvalId))?.status).toBe('pending');
  });
});
