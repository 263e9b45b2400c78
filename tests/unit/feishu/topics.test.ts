import { describe, expect, it } from 'vitest';
import { FeishuTopics, topicScopeHint } from '../../../src/adapters/feishu/topics.js';
import type { ReplyTarget } from '../../../src/core/contracts/adapter.js';
import { feishuClientFor, useFakeFeishu } from '../../helpers/feishu-client.js';
import { recordingLogger } from '../../helpers/recording-logger.js';
import { testTenantKey } from './feishu-events.js';

/** FeishuTopics through the real Lark SDK client against the fake Open API. */

const feishu = useFakeFeishu((fake) => {
  fake.topics.scopeMissing = false;
  fake.topics.recalled.clear();
  fake.restore();
});

function setup() {
  const clock = { now: 1_000_000 };
  const { lines, logger } = recordingLogger();
  const topics = new FeishuTopics(feishuClientFor(feishu.fake, logger), logger, () => clock.now);
  const listings = () => feishu.fake.callsTo('GET', '/open-apis/im/v1/messages');
  return { topics, lines, clock, listings };
}

const inThread = (chatId: string, thread: string, replyTo?: string): ReplyTarget => ({
  address: { platform: 'feishu', workspace: testTenantKey, channel: chatId, thread },
  userId: 'ou_alice',
  ...(replyTo ? { replyTo } : {}),
});

describe('Feishu topics', () => {
  it('answers a topic under the message a reply there answered before, without asking Feishu', async () => {
    const { topics, listings } = setup();
    expect(await topics.destination(inThread('oc_topics', 'omt_seen', 'om_asked'))).toEqual({
      chatId: 'oc_topics',
      replyTo: 'om_asked',
      replyInThread: true,
    });
    expect(await topics.destination(inThread('oc_topics', 'omt_seen'))).toEqual({
      chatId: 'oc_topics',
      replyTo: 'om_asked',
      replyInThread: true,
    });
    expect(listings()).toEqual([]);
  });

  it("asks Feishu for an unseen topic's first message once, and replies in the topic under it", async () => {
    const { topics, listings } = setup();
    const { threadId, rootId } = feishu.fake.topics.start('oc_topics');
    const expected = { chatId: 'oc_topics', replyTo: rootId, replyInThread: true };
    expect(await topics.destination(inThread('oc_topics', threadId))).toEqual(expected);
    expect(await topics.destination(inThread('oc_topics', threadId))).toEqual(expected);
    expect(listings().map((call) => call.query)).toEqual([
      { container_id_type: 'thread', container_id: threadId, sort_type: 'ByCreateTimeAsc', page_size: '20' },
    ]);
  });

  it('leaves other places alone: a chat, a thread under a message, a direct chat', async () => {
    const { topics, listings } = setup();
    expect(await topics.destination(inThread('oc_group', 'om_root'))).toEqual({
      chatId: 'oc_group',
      replyTo: 'om_root',
      replyInThread: false,
    });
    expect(await topics.destination(inThread('oc_dm', 'main'))).toEqual({
      chatId: 'oc_dm',
      replyTo: undefined,
      replyInThread: false,
    });
    expect(listings()).toEqual([]);
  });

  it('sends to the chat without the scope, says which scope once, and asks again after ten minutes', async () => {
    const { topics, lines, clock, listings } = setup();
    feishu.fake.topics.scopeMissing = true;
    const first = feishu.fake.topics.start('oc_topics');
    const second = feishu.fake.topics.start('oc_topics');
    const toChat = { chatId: 'oc_topics', replyTo: undefined, replyInThread: false };
    expect(await topics.destination(inThread('oc_topics', first.threadId))).toEqual(toChat);
    expect(await topics.destination(inThread('oc_topics', second.threadId))).toEqual(toChat);
    expect(listings()).toHaveLength(1);
    expect(lines.filter((line) => line.level === 'warn')).toEqual([
      { level: 'warn', message: topicScopeHint },
    ]);
    expect(topicScopeHint).toContain('im:message.group_msg');

    // Granted later: found after the recheck interval, without a restart or a second hint.
    feishu.fake.topics.scopeMissing = false;
    clock.now += 11 * 60_000;
    expect(await topics.destination(inThread('oc_topics', second.threadId))).toEqual({
      chatId: 'oc_topics',
      replyTo: second.rootId,
      replyInThread: true,
    });
    expect(lines.filter((line) => line.level === 'warn')).toHaveLength(1);
  });

  it('sends to the chat when a topic lists nothing or the lookup fails, and tries again after five minutes', async () => {
    const { topics, clock, listings } = setup();
    const toChat = { chatId: 'oc_topics', replyTo: undefined, replyInThread: false };
    expect(await topics.destination(inThread('oc_topics', 'omt_empty'))).toEqual(toChat);
    feishu.fake.fail({ path: '/open-apis/im/v1/messages', status: 500, code: 1, msg: 'boom' });
    const { threadId, rootId } = feishu.fake.topics.start('oc_topics');
    expect(await topics.destination(inThread('oc_topics', threadId))).toEqual(toChat);
    expect(await topics.destination(inThread('oc_topics', threadId))).toEqual(toChat);
    expect(listings()).toHaveLength(2);
    feishu.fake.restore();
    clock.now += 6 * 60_000;
    expect(await topics.destination(inThread('oc_topics', threadId))).toMatchObject({ replyTo: rootId });
  });

  it('skips a recalled message in the listing', async () => {
    const { topics } = setup();
    const { threadId, rootId } = feishu.fake.topics.start('oc_topics');
    feishu.fake.topics.recalled.add(rootId);
    expect(await topics.destination(inThread('oc_topics', threadId))).toEqual({
      chatId: 'oc_topics',
      replyTo: undefined,
      replyInThread: false,
    });
  });

  it('sends once more, without it, when Feishu refuses a reply under a learned message that was recalled', async () => {
    const { topics, lines } = setup();
    const api = feishuClientFor(feishu.fake);
    const { threadId, rootId } = feishu.fake.topics.start('oc_topics');
    // Butler answered Ana's question in the topic; she recalled it afterwards.
    await topics.destination(inThread('oc_topics', threadId, 'om_ana_question'));
    feishu.fake.topics.recalled.add('om_ana_question');
    const text = { msgType: 'text' as const, content: { text: 'The digest.' } };
    const sent = await topics.send(inThread('oc_topics', threadId), (destination) =>
      api.sendMessage(destination, text),
    );
    expect(feishu.fake.messages.get(sent)).toMatchObject({ replyTo: rootId, replyInThread: true });
    expect(feishu.fake.callsTo('POST', /\/reply$/).map((call) => call.path)).toEqual([
      '/open-apis/im/v1/messages/om_ana_question/reply',
      `/open-apis/im/v1/messages/${rootId}/reply`,
    ]);
    expect(lines.filter((line) => line.level === 'warn')).toHaveLength(1);
    // The next send goes under the topic's message at once.
    await topics.send(inThread('oc_topics', threadId), (destination) => api.sendMessage(destination, text));
    expect(feishu.fake.callsTo('POST', /\/reply$/)).toHaveLength(3);
  });

  it("does not send again when the target's own message was refused", async () => {
    const { topics } = setup();
    const api = feishuClientFor(feishu.fake);
    feishu.fake.topics.recalled.add('om_gone');
    const text = { msgType: 'text' as const, content: { text: 'Hello.' } };
    await expect(
      topics.send(inThread('oc_topics', 'omt_x', 'om_gone'), (destination) =>
        api.sendMessage(destination, text),
      ),
    ).rejects.toThrow(/code 230011/);
    expect(feishu.fake.callsTo('POST', /\/reply$/)).toHaveLength(1);
  });
});
