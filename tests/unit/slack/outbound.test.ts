import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSlackAdapter } from '../../../src/adapters/slack/outbound.js';
import { createCapabilities, defaultReplyTuning } from '../../../src/adapters/slack/reply-format.js';
import { createSlackApi } from '../../../src/adapters/slack/slack-api.js';
import type { ChatAdapter, ReplyTarget } from '../../../src/core/contracts/adapter.js';
import type { ApprovalCard, ApprovalCardCall } from '../../../src/core/contracts/approval-card.js';
import type { InboundMessage } from '../../../src/core/contracts/events.js';
import { silentLogger } from '../../../src/core/contracts/logger.js';
import { type FakeSlackApi, startFakeSlackApi } from '../../helpers/fake-slack-api.js';
import { botId, botUserId, team } from './payloads.js';

let fake: FakeSlackApi;
let slack: ChatAdapter;

beforeEach(async () => {
  fake = await startFakeSlackApi();
  const api = createSlackApi({ token: 'xoxb-test', apiUrl: fake.url, logger: silentLogger, retries: 0 });
  slack = createSlackAdapter({
    api,
    logger: silentLogger,
    capabilities: createCapabilities(),
    tuning: defaultReplyTuning,
    identity: () => ({ userId: botUserId, botId, teamId: team }),
  });
});
afterEach(async () => {
  await fake.close();
});

const threadTs = '1700000000.000100';
const channelTarget: ReplyTarget = {
  address: { platform: 'slack', workspace: team, channel: 'C0GENERAL', thread: threadTs },
  replyTo: '1700000000.000200',
  userId: 'U0ALICE',
};
const dmTarget: ReplyTarget = {
  address: { platform: 'slack', workspace: team, channel: 'D0ALICE', thread: 'main' },
  replyTo: '1700000100.000100',
  userId: 'U0ALICE',
};

const pendingCall: ApprovalCardCall = {
  approvalId: 'ap-1',
  status: 'pending',
  toolName: 'restart_service',
  summary: 'Restart payments-api',
  argumentsJson: '{"service":"payments-api"}',
  argumentsLength: 26,
  argumentsCut: false,
  risk: 'medium',
  whoMayApprove: 'the requester or an approver',
};
const card: ApprovalCard = {
  batchId: 'batch-1',
  calls: [pendingCall],
  requesters: [{ id: 'U0ALICE' }],
  approverIds: [],
  expiresAt: new Date('2026-11-20T13:00:00Z'),
};

// Indicators are cosmetic: showing one never waits for Slack, so the tests wait for the calls to arrive.
describe('working indicator', () => {
  it('uses assistant status in DMs and clears it', async () => {
    const clear = await slack.showWorking(dmTarget);
    await fake.waitFor(() => fake.callsTo('assistant.threads.setStatus')[0]);
    expect(fake.callsTo('assistant.threads.setStatus')[0]?.args).toMatchObject({
      channel_id: 'D0ALICE',
      thread_ts: '1700000100.000100',
      status: 'is thinking…',
    });
    await clear();
    expect(fake.callsTo('assistant.threads.setStatus')[1]?.args.status).toBe('');
    expect(fake.callsTo('reactions.add')).toHaveLength(0);
  });

  it('adds and removes a reaction on the user message in channels', async () => {
    fake.seedMessage({
      channel: 'C0GENERAL',
      ts: '1700000000.000200',
      threadTs,
      user: 'U0ALICE',
      text: 'hi',
    });
    const clear = await slack.showWorking(channelTarget);
    await fake.waitFor(() => fake.messages.get('C0GENERAL:1700000000.000200')?.reactions.has('eyes'));
    await clear();
    expect(fake.messages.get('C0GENERAL:1700000000.000200')?.reactions.size).toBe(0);
    expect(fake.callsTo('assistant.threads.setStatus')).toHaveLength(0);
  });

  it('falls back to a reaction where assistant status is refused, and swallows failures', async () => {
    fake.assistantThreads = false;
    fake.seedMessage({ channel: 'D0ALICE', ts: '1700000100.000100', user: 'U0ALICE', text: 'hi' });
    // The status line is refused: the reaction shows from the next turn on (no turn waits to learn it).
    const refused = await slack.showWorking(dmTarget);
    await fake.waitFor(() => fake.callsTo('assistant.threads.setStatus')[0]);
    await refused();
    const clear = await slack.showWorking(dmTarget);
    await fake.waitFor(() => fake.messages.get('D0ALICE:1700000100.000100')?.reactions.has('eyes'));
    await clear();
    // Learnt once: later DMs go straight to the reaction.
    await (await slack.showWorking(dmTarget))();
    expect(fake.callsTo('assistant.threads.setStatus')).toHaveLength(1);

    fake.failNext('reactions.add', { status: 500 });
    const nothing = await slack.showWorking({ ...channelTarget, replyTo: '1.1' });
    await expect(nothing()).resolves.toBeUndefined();
    fake.failNext('reactions.remove', { error: 'no_reaction' });
    await expect((await slack.showWorking(channelTarget))()).resolves.toBeUndefined();
  });
});

describe('progress in the working indicator', () => {
  it('puts the status text in a DM assistant thread; clearing the indicator clears it', async () => {
    const clear = await slack.showWorking(dmTarget);
    await fake.waitFor(() => fake.callsTo('assistant.threads.setStatus')[0]);
    await slack.showProgress?.(dmTarget, 'is asking ops…');
    expect(fake.callsTo('assistant.threads.setStatus').map((call) => call.args)).toEqual([
      { channel_id: 'D0ALICE', thread_ts: '1700000100.000100', status: 'is thinking…' },
      { channel_id: 'D0ALICE', thread_ts: '1700000100.000100', status: 'is asking ops…' },
    ]);
    await clear();
    expect(fake.callsTo('assistant.threads.setStatus').at(-1)?.args.status).toBe('');
  });

  it('makes no call in a channel, nor where assistant status is refused, and never throws', async () => {
    await slack.showProgress?.(channelTarget, 'is asking ops…');
    expect(fake.calls).toHaveLength(0);

    fake.failNext('assistant.threads.setStatus', { status: 500 });
    await expect(slack.showProgress?.(dmTarget, 'is asking docs…')).resolves.toBeUndefined();

    fake.assistantThreads = false;
    await expect(slack.showProgress?.(dmTarget, 'is asking docs…')).resolves.toBeUndefined();
    // Learnt once: later progress in DMs is not sent either.
    const sent = fake.callsTo('assistant.threads.setStatus').length;
    await slack.showProgress?.(dmTarget, 'is asking ops…');
    expect(fake.callsTo('assistant.threads.setStatus')).toHaveLength(sent);
  });
});

describe('notices and approval cards', () => {
  it('posts notices in the thread as mrkdwn', async () => {
    await slack.postNotice(channelTarget, 'The model is **unavailable**; try again.');
    expect(fake.callsTo('chat.postMessage')[0]?.args).toMatchObject({
      channel: 'C0GENERAL',
      thread_ts: threadTs,
      text: 'The model is *unavailable*; try again.',
    });
    // In a DM's top level, where the reply goes: the thread of the message answered.
    await slack.postNotice(dmTarget, 'hello');
    expect(fake.callsTo('chat.postMessage')[1]?.args.thread_ts).toBe(dmTarget.replyTo);
  });

  it('posts a card in the thread and updates it in place', async () => {
    const ts = await slack.postApprovalCard(channelTarget, card);
    const posted = fake.callsTo('chat.postMessage')[0]?.args;
    expect(posted?.thread_ts).toBe(threadTs);
    expect(JSON.stringify(posted?.blocks)).toContain('butler_approve');
    await slack.updateApprovalCard(channelTarget.address, ts, {
      ...card,
      calls: [{ ...pendingCall, status: 'expired' }],
    });
    const updated = fake.callsTo('chat.update')[0]?.args;
    expect(updated?.ts).toBe(ts);
    expect(JSON.stringify(updated?.blocks)).not.toContain('butler_approve');
    expect(JSON.stringify(updated?.blocks)).toContain('Expired');
  });
});

describe('prepare', () => {
  const message: InboundMessage = {
    kind: 'message',
    address: { platform: 'slack', workspace: team, channel: 'C0GENERAL', thread: threadTs },
    messageId: '1700000000.000500',
    eventId: 'Ev1',
    dedupKey: 'T0BUTLER:C0GENERAL:1700000000.000500',
    user: { id: 'U0ALICE' },
    text: 'ask <@U0BOB> and <@U0GHOST>',
    isMention: true,
    isDirect: false,
    sentAt: new Date().toISOString(),
  };

  beforeEach(() => {
    fake.users.set('U0ALICE', { name: 'alice', displayName: 'Alice' });
    fake.users.set('U0BOB', { name: 'bob', realName: 'Bob Builder' });
    fake.seedMessage({
      channel: 'C0GENERAL',
      ts: threadTs,
      user: 'U0BOB',
      text: 'The deploy of <@U0ALICE> failed',
    });
    fake.seedMessage({
      channel: 'C0GENERAL',
      ts: '1700000000.000200',
      threadTs,
      user: botUserId,
      botId,
      text: 'Earlier answer',
    });
    fake.seedMessage({
      channel: 'C0GENERAL',
      ts: '1700000000.000300',
      threadTs,
      user: 'U0ALICE',
      text: `<@${botUserId}> why?`,
    });
    fake.seedMessage({
      channel: 'C0GENERAL',
      ts: '1700000000.000500',
      threadTs,
      user: 'U0ALICE',
      text: 'the message itself',
    });
  });

  it('resolves mentions and the sender name, and reads the thread for a new conversation', async () => {
    const prepared = await slack.prepare?.(message, { newConversation: true });
    expect(prepared?.message.text).toBe('ask @Bob Builder and <@U0GHOST>');
    expect(prepared?.message.user).toEqual({ id: 'U0ALICE', name: 'Alice' });
    expect(prepared?.threadContext).toEqual([
      { user: 'Bob Builder', text: 'The deploy of @Alice failed', fromButler: false },
      { user: 'Butler', text: 'Earlier answer', fromButler: true },
      { user: 'Alice', text: 'why?', fromButler: false },
    ]);
    expect(fake.callsTo('conversations.replies')[0]?.args).toMatchObject({
      ts: threadTs,
      latest: message.messageId,
    });
    // Names are cached.
    expect(fake.callsTo('users.info').filter((call) => call.args.user === 'U0BOB')).toHaveLength(1);
  });

  it('skips the thread for known conversations and for a thread root', async () => {
    await slack.prepare?.(message, { newConversation: false });
    await slack.prepare?.({ ...message, messageId: threadTs }, { newConversation: true });
    expect(fake.callsTo('conversations.replies')).toHaveLength(0);
  });

  it('keeps the message when Slack lookups fail', async () => {
    fake.failNext('conversations.replies', { error: 'missing_scope' });
    fake.failNext('users.info', { error: 'ratelimited' }, 5);
    const prepared = await slack.prepare?.(
      { ...message, user: { id: 'U0CAROL' } },
      { newConversation: true },
    );
    expect(prepared?.message.user).toEqual({ id: 'U0CAROL' });
    expect(prepared?.threadContext).toBeUndefined();
  });
});
