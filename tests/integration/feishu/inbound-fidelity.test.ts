import { describe, expect, it } from 'vitest';
import { captureLogs } from '../../helpers/log-capture.js';
import { lastUserContent, storedEvents } from '../../helpers/platform-butler.js';
import {
  aliceOpenId,
  bobOpenId,
  messageEvent,
  otherEvent,
  postContent,
  postToButler,
  testBotOpenId,
  testTenantKey,
  uniqueId,
} from '../../unit/feishu/feishu-events.js';
import { repliesTo, useFeishuButler } from './feishu-butler.js';

/** Who is speaking, what mentions Butler and what is attached, through the Lark SDK and the running Butler (issue 12). */

const botUnionId = 'on_bot_butler_union';
const logs = captureLogs();
const suite = useFeishuButler({
  fake: { botUnionId },
  logLevel: 'info',
  logDestination: logs.stream,
  prepare: (fake) => {
    fake.contactUsers.set(aliceOpenId, { name: 'Alice Chen' });
    fake.contactUsers.set(bobOpenId, { name: 'Bob Li' });
  },
});

describe('Feishu: speakers, mentions and attachments through the running Butler', () => {
  it("shows the model the speaker's name in a group, and names a mention the event left unnamed", async () => {
    await postToButler(
      suite.url,
      messageEvent({
        text: '@_user_1 ask @_user_2 about payments',
        mentions: [
          { key: '@_user_1', openId: testBotOpenId, name: 'Butler' },
          { key: '@_user_2', openId: bobOpenId },
        ],
      }),
    );
    await suite.app.settle();
    expect(lastUserContent(suite.model, 0)).toBe('Alice Chen: ask @Bob Li about payments');
    const lookups = suite.fake.callsTo('GET', /^\/open-apis\/contact\/v3\/users\//);
    expect(lookups.map((call) => call.query.user_id_type)).toEqual(['open_id', 'open_id']);
  });

  it('answers a post that mentions Butler only in its at tag, with mentions: []', async () => {
    const messageId = uniqueId('om_');
    await postToButler(
      suite.url,
      messageEvent({
        messageId,
        messageType: 'post',
        mentions: [],
        content: postContent([
          [
            { tag: 'at', user_id: testBotOpenId, user_name: 'Butler', style: [] },
            { tag: 'text', text: ' is the deploy done?', style: [] },
          ],
        ]),
      }),
    );
    await suite.app.settle();
    expect(lastUserContent(suite.model, 0)).toBe('Alice Chen: is the deploy done?');
    expect(repliesTo(suite.fake, messageId)).toHaveLength(1);
  });

  it("answers a mention entry that carries only the bot's union_id", async () => {
    const messageId = uniqueId('om_');
    await postToButler(
      suite.url,
      messageEvent({
        messageId,
        text: '@_user_1 restart payments?',
        mentions: [{ key: '@_user_1', unionId: botUnionId, name: 'Butler' }],
      }),
    );
    await suite.app.settle();
    expect(lastUserContent(suite.model, 0)).toBe('Alice Chen: restart payments?');
    expect(repliesTo(suite.fake, messageId)).toHaveLength(1);
  });

  it('reads the messages a merged forward holds, nested forwards indented, in the order they were sent', async () => {
    const messageId = uniqueId('om_');
    const nestedId = uniqueId('om_');
    const sub = (
      id: string,
      upper: string,
      sender: string,
      createTime: number,
      type: string,
      content: unknown,
    ) => ({
      message_id: id,
      upper_message_id: upper,
      msg_type: type,
      create_time: String(createTime),
      chat_id: 'oc_elsewhere',
      sender: { id: sender, id_type: 'open_id', sender_type: 'user', tenant_key: testTenantKey },
      body: { content: JSON.stringify(content) },
      mentions:
        type === 'text' ? [{ key: '@_user_1', id: aliceOpenId, id_type: 'open_id', name: 'Alice Chen' }] : [],
    });
    suite.fake.messageItems.set(messageId, [
      { message_id: messageId, msg_type: 'merge_forward', body: { content: 'Merged and Forwarded Message' } },
      sub(uniqueId('om_'), messageId, bobOpenId, 2_000, 'text', {
        text: '@_user_1 rolled back.\nAll green.',
      }),
      sub(uniqueId('om_'), messageId, aliceOpenId, 1_000, 'text', { text: 'the deploy failed at 10:02' }),
      sub(nestedId, messageId, bobOpenId, 3_000, 'merge_forward', 'Merged and Forwarded Message'),
      sub(uniqueId('om_'), nestedId, 'ou_carol', 500, 'image', { image_key: 'img_v3_01' }),
    ]);
    await postToButler(
      suite.url,
      messageEvent({
        messageId,
        chatType: 'p2p',
        chatId: uniqueId('oc_dm_'),
        messageType: 'merge_forward',
        content: {},
      }),
    );
    await suite.app.settle();
    expect(lastUserContent(suite.model, 0)).toBe(
      [
        '[forwarded a chat history:]',
        'Alice Chen: the deploy failed at 10:02',
        'Bob Li: @Alice Chen rolled back.',
        '  All green.',
        'Bob Li: [forwarded a chat history]',
        '  ou_carol: [sent an image, which Butler cannot view]',
      ].join('\n'),
    );
    const reads = suite.fake.callsTo('GET', /^\/open-apis\/im\/v1\/messages\//);
    expect(reads.map((call) => call.path)).toEqual([`/open-apis/im/v1/messages/${messageId}`]);
  });

  it('says a forwarded history could not be opened when Feishu will not list it, and still answers', async () => {
    const chatId = uniqueId('oc_dm_');
    await postToButler(
      suite.url,
      messageEvent({
        chatType: 'p2p',
        chatId,
        messageType: 'merge_forward',
        content: {},
      }),
    );
    await suite.app.settle();
    expect(lastUserContent(suite.model, 0)).toBe('[forwarded a chat history, which Butler could not open]');
    expect(suite.fake.sentMessages().filter((message) => message.chatId === chatId)).toHaveLength(1);
    expect(logs.records().some((line) => line.msg === 'Feishu forwarded history could not be read')).toBe(
      true,
    );
  });

  it('acknowledges lifecycle events it does not act on quietly, storing nothing', async () => {
    const before = await storedEvents(suite.app);
    logs.clear();
    const userIds = { open_id: aliceOpenId, union_id: 'on_alice', user_id: 'alice' };
    const events = [
      otherEvent('im.message.message_read_v1', {
        reader: { reader_id: userIds, read_time: String(Date.now()), tenant_key: testTenantKey },
        message_id_list: [uniqueId('om_')],
      }),
      ...['im.message.reaction.created_v1', 'im.message.reaction.deleted_v1'].map((type) =>
        otherEvent(type, {
          message_id: uniqueId('om_'),
          reaction_type: { emoji_type: 'Typing' },
          operator_type: 'app',
          user_id: { open_id: testBotOpenId },
          action_time: String(Date.now()),
        }),
      ),
      otherEvent('im.message.recalled_v1', {
        message_id: uniqueId('om_'),
        chat_id: 'oc_group_chat',
        recall_time: String(Date.now()),
        recall_type: 'message_owner',
      }),
      ...['im.chat.member.bot.added_v1', 'im.chat.member.bot.deleted_v1'].map((type) =>
        otherEvent(type, {
          chat_id: 'oc_group_chat',
          operator_id: userIds,
          external: false,
          operator_tenant_key: testTenantKey,
          name: 'ops',
          i18n_names: { zh_cn: '运维', en_us: 'ops' },
        }),
      ),
    ];
    for (const event of events) {
      expect(await postToButler(suite.url, event)).toEqual({ status: 200, body: {} });
    }
    await suite.app.settle();
    expect(await storedEvents(suite.app)).toBe(before);
    expect(suite.model.requests).toHaveLength(0);
    expect(logs.warnings()).toEqual([]);
  });
});
