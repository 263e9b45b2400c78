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

  it("notes a post's files the way Slack files are noted", async () => {
    await postToButler(
      suite.url,
      messageEvent({
        chatType: 'p2p',
        chatId: uniqueId('oc_dm_'),
        messageType: 'post',
        content: postContent([[{ tag: 'text', text: 'fill in this table', style: [] }]], {
          files: [{ file_key: 'file_v3_00ab', file_name: 'quota.xlsx', is_folder: false }],
        }),
      }),
    );
    await suite.app.settle();
    expect(lastUserContent(suite.model, 0)).toBe(
      'fill in this table\n[attached file: quota.xlsx; Butler cannot open attachments]',
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
