import { beforeEach, describe, expect, it } from 'vitest';
import type { ConversationAddress } from '../../../src/core/contracts/events.js';
import { databaseKind } from '../../helpers/database.js';
import { scopeMissingCode } from '../../helpers/fake-feishu-contact.js';
import {
  aliceOpenId,
  messageEvent,
  postToButler,
  testTenantKey,
  uniqueId,
} from '../../unit/feishu/feishu-events.js';
import { useFeishuButler } from './feishu-butler.js';

/**
 * Feishu for scheduled tasks, through the running Butler with the real Lark SDK: a person's time zone from the
 * contact API, runs that answer no message (sent into the chat, under the thread's anchor, or under a topic's
 * first message), and "remind me" reaching the person's direct chat by open_id.
 */

const suite = useFeishuButler({
  config: { schedules: { checkEvery: '100ms' } },
  prepare: (fake) => fake.contactUsers.set(aliceOpenId, { name: 'Alice Chen', timeZone: 'Asia/Shanghai' }),
});

// The suite keeps the fake's recordings across tests; each test looks at its own calls.
beforeEach(() => {
  suite.fake.calls.length = 0;
});

const alice = { platform: 'feishu' as const, id: aliceOpenId, name: 'Alice Chen', timezone: 'Asia/Shanghai' };
const address = (channel: string, thread = 'main'): ConversationAddress => ({
  platform: 'feishu',
  workspace: testTenantKey,
  channel,
  thread,
});

/** The model answers after the working indicator's delay, so an indicator would have shown. */
const slowly = (text: string) => async () => {
  await new Promise((resolve) => setTimeout(resolve, 700));
  return { text };
};

/** A task due in a second, asked by Alice (no chat message behind it unless `anchor`). */
function scheduleRun(where: ConversationAddress, prompt: string, anchor?: string) {
  return suite.app.butler.schedules.create({
    creator: alice,
    address: where,
    prompt,
    at: 'PT1S',
    isDirect: where.thread === 'main' && where.channel.startsWith('oc_dm'),
    ...(anchor ? { anchor } : {}),
    source: 'chat',
  });
}

const sentTo = (chatId: string) => suite.fake.sentMessages().filter((message) => message.chatId === chatId);
const reactionCalls = () => suite.fake.callsTo('POST', /\/reactions$/);

/** Waits for the run's reply in `chatId` and for the turn to end. */
async function runReply(chatId: string) {
  await waitUntil(() => sentTo(chatId).length > 0);
  await suite.app.settle();
  return sentTo(chatId);
}

async function waitUntil(probe: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe(`Feishu time zones and scheduled runs (${databaseKind})`, () => {
  it("gives the model a direct-chat sender's profile time zone", async () => {
    suite.model.enqueue({ text: 'Hi Alice.' });
    await postToButler(
      suite.url,
      messageEvent({ chatType: 'p2p', chatId: 'oc_dm_tz', text: 'what time is it for me?' }),
    );
    await suite.app.settle();
    expect(String(suite.model.requests[0]?.messages[0]?.content)).toMatch(
      /The person's time zone is Asia\/Shanghai: .* there now\./,
    );
  });

  it('sends a run in a direct chat into the chat, with no typing reaction', async () => {
    suite.model.enqueue(slowly('Time to stretch, Alice.'));
    await scheduleRun(address('oc_dm_alice'), 'Remind me to stretch');
    const [reply] = await runReply('oc_dm_alice');
    expect(reply?.replyTo).toBeUndefined();
    expect(suite.fake.visibleText(reply?.messageId ?? '')).toContain('Time to stretch, Alice.');
    expect(suite.fake.callsTo('POST', '/open-apis/im/v1/messages').at(-1)?.query.receive_id_type).toBe(
      'chat_id',
    );
    expect(reactionCalls()).toEqual([]);
  });

  it("answers a group thread's anchor when a run there has no message of its own", async () => {
    const root = uniqueId('om_');
    suite.model.enqueue(slowly('The deploy went out.'));
    await scheduleRun(address('oc_group_runs', root), 'Check the deploy');
    await waitUntil(() => suite.fake.sentMessages().some((message) => message.replyTo === root));
    await suite.app.settle();
    const replies = suite.fake.sentMessages().filter((message) => message.replyTo === root);
    expect(
      replies.map((message) => [message.replyInThread, suite.fake.visibleText(message.messageId)]),
    ).toEqual([[false, expect.stringContaining('The deploy went out.')]]);
    expect(reactionCalls()).toEqual([]);
  });

  it('replies in a topic thread under the message the task was asked under', async () => {
    const anchor = uniqueId('om_');
    suite.model.enqueue({ text: 'Standup notes posted.' });
    await scheduleRun(address('oc_topics', uniqueId('omt_')), 'Post standup notes', anchor);
    await waitUntil(() => suite.fake.sentMessages().some((message) => message.replyTo === anchor));
    await suite.app.settle();
    const replies = suite.fake.sentMessages().filter((message) => message.replyTo === anchor);
    expect(replies.map((message) => message.replyInThread)).toEqual([true]);
  });

  it("replies in a topic named without a message (a config or API task) under the topic's first message", async () => {
    const { threadId, rootId } = suite.fake.topics.start('oc_topics_named');
    suite.model.enqueue({ text: 'Digest posted.' });
    await scheduleRun(address('oc_topics_named', threadId), 'Post the digest');
    await waitUntil(() => suite.fake.sentMessages().some((message) => message.replyTo === rootId));
    await suite.app.settle();
    const replies = suite.fake.sentMessages().filter((message) => message.replyTo === rootId);
    expect(replies.map((message) => message.replyInThread)).toEqual([true]);
    expect(suite.fake.visibleText(replies[0]?.messageId ?? '')).toContain('Digest posted.');
    // Nothing went to the chat itself, which would have started a new topic.
    expect(suite.fake.callsTo('POST', '/open-apis/im/v1/messages')).toEqual([]);
    expect(suite.fake.callsTo('GET', '/open-apis/im/v1/messages')[0]?.query).toMatchObject({
      container_id_type: 'thread',
      container_id: threadId,
    });
  });

  it("sends a run's approval card into the direct chat", async () => {
    suite.model.enqueue({
      toolCalls: [{ id: 'call_run_restart', name: 'restart_service', arguments: '{"service":"api"}' }],
    });
    await scheduleRun(address('oc_dm_cards'), 'Restart the api');
    const [card] = await runReply('oc_dm_cards');
    expect(card).toMatchObject({ msgType: 'interactive', replyTo: undefined });
    expect(JSON.stringify(card?.content)).toContain('restart_service');
  });

  it('"remind me" from a group sends an inert note by open_id, and the run goes to that direct chat', async () => {
    suite.model.enqueue({ text: 'Stand-up in 5 minutes.' });
    const { schedule, confirmation } = await suite.app.butler.schedules.create({
      creator: alice,
      address: address('oc_group_chat', uniqueId('om_')),
      prompt: 'Tell <at id=all></at> about stand-up',
      at: 'PT1S',
      isDirect: false,
      direct: true,
      source: 'chat',
    });
    expect(confirmation).toMatch(/in your direct chat with me/);
    const byOpenId = suite.fake
      .callsTo('POST', '/open-apis/im/v1/messages')
      .filter((call) => call.query.receive_id_type === 'open_id');
    expect(byOpenId.map((call) => call.body?.receive_id)).toEqual([aliceOpenId]);
    const chatId = suite.fake.directChats.get(aliceOpenId) ?? '';
    expect(schedule.conversationKey).toBe(`feishu:${testTenantKey}:${chatId}:main`);
    const [note] = sentTo(chatId);
    expect(note?.content.text).toMatch(
      /^I'll post your scheduled task here, next at .*: "Tell <\u200bat id=all><\/at> about stand-up"$/,
    );

    await waitUntil(() => sentTo(chatId).length > 1);
    await suite.app.settle();
    const run = sentTo(chatId)[1];
    expect(run?.replyTo).toBeUndefined();
    expect(suite.fake.visibleText(run?.messageId ?? '')).toContain('Stand-up in 5 minutes.');
  });

  it('"remind me" fails naming Feishu\'s refusal when the app may not message the person', async () => {
    suite.fake.fail({
      method: 'POST',
      path: '/open-apis/im/v1/messages',
      status: 400,
      code: scopeMissingCode,
      msg: 'Access denied. One of the following scopes is required: [im:message:send_as_bot].',
    });
    await expect(
      suite.app.butler.schedules.create({
        creator: alice,
        address: address('oc_group_chat', uniqueId('om_')),
        prompt: 'Remind me to leave',
        at: 'PT1H',
        isDirect: false,
        direct: true,
        source: 'chat',
      }),
    ).rejects.toThrow(/Feishu message create failed \(HTTP 400, code 99991672\)/);
  });
});
