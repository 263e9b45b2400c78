import { describe, expect, it } from 'vitest';
import type { FeishuBotIdentity } from '../../../src/adapters/feishu/bot-identity.js';
import { parseMessageReceiveEvent } from '../../../src/adapters/feishu/event-payloads.js';
import { messageText } from '../../../src/adapters/feishu/message-content.js';
import { normalizeMessageEvent } from '../../../src/adapters/feishu/normalize.js';
import { bobOpenId, type MessageSpec, messageEvent, postContent, testBotOpenId } from './feishu-events.js';

const now = 1_766_000_000_000;
const openIdOnly: FeishuBotIdentity = {
  openId: testBotOpenId,
  userId: undefined,
  unionId: undefined,
  name: 'Butler',
};

function normalize(spec: MessageSpec, bot: FeishuBotIdentity = openIdOnly) {
  const envelope = messageEvent({ createTime: now - 1000, ...spec });
  const { header, event, ...rest } = envelope as { header: object; event: object };
  return normalizeMessageEvent(parseMessageReceiveEvent({ ...rest, ...header, ...event }), {
    bot,
    nowMilliseconds: now,
    maxAgeMilliseconds: 30 * 60_000,
  });
}

function text(result: ReturnType<typeof normalize>): string {
  if (result.kind !== 'message') throw new Error(`expected a message, got ${result.reason}`);
  return result.message.text;
}

describe('Feishu mentions of the bot', () => {
  it('answers a post that mentions the bot only in its at tag (open_id), with mentions: []', () => {
    const result = normalize({
      messageType: 'post',
      mentions: [],
      content: postContent([
        [
          { tag: 'at', user_id: testBotOpenId, user_name: 'Butler' },
          { tag: 'text', text: ' is payments healthy?' },
        ],
      ]),
    });
    expect(result).toMatchObject({ kind: 'message', message: { isMention: true } });
    expect(text(result)).toBe('is payments healthy?');
  });

  it('does not take an at tag for someone else, or a placeholder without its entry, as a mention', () => {
    const other = normalize({
      messageType: 'post',
      mentions: [],
      content: postContent([
        [
          { tag: 'at', user_id: bobOpenId, user_name: 'Bob' },
          { tag: 'text', text: ' hi' },
        ],
      ]),
    });
    expect(other).toEqual({ kind: 'skip', reason: 'not_mentioned' });
    const orphan = normalize({
      messageType: 'post',
      mentions: [],
      content: postContent([[{ tag: 'at', user_id: '@_user_1', user_name: 'Butler' }]]),
    });
    expect(orphan).toEqual({ kind: 'skip', reason: 'not_mentioned' });
  });

  it("matches a mention entry without open_id on whichever id the bot's identity has", () => {
    const spec: MessageSpec = {
      text: '@_user_1 restart payments',
      mentions: [{ key: '@_user_1', unionId: 'on_bot_union', name: 'Butler' }],
    };
    expect(normalize(spec)).toEqual({ kind: 'skip', reason: 'not_mentioned' });
    const withUnion = normalize(spec, { ...openIdOnly, unionId: 'on_bot_union' });
    expect(withUnion).toMatchObject({ kind: 'message', message: { isMention: true } });
    expect(text(withUnion)).toBe('restart payments');
    const byUserId = normalize(
      { text: '@_user_1 hi', mentions: [{ key: '@_user_1', userId: 'bot_user_7', unionId: '' }] },
      { ...openIdOnly, userId: 'bot_user_7' },
    );
    expect(byUserId).toMatchObject({ kind: 'message', message: { isMention: true } });
  });

  it('never matches on empty ids', () => {
    const result = normalize(
      { text: '@_user_1 hi', mentions: [{ key: '@_user_1', userId: '', unionId: '', name: 'Bob' }] },
      { ...openIdOnly, userId: undefined, unionId: undefined },
    );
    expect(result).toEqual({ kind: 'skip', reason: 'not_mentioned' });
  });

  it('leaves the open_id of a person whose name the event lacks, for prepare to resolve', () => {
    const result = normalize({
      text: '@_user_1 ask @_user_2',
      mentions: [
        { key: '@_user_1', openId: testBotOpenId, name: 'Butler' },
        { key: '@_user_2', openId: bobOpenId },
      ],
    });
    expect(text(result)).toBe(`ask @${bobOpenId}`);
    const post = normalize({
      messageType: 'post',
      mentions: [],
      content: postContent([
        [
          { tag: 'at', user_id: testBotOpenId },
          { tag: 'text', text: ' ping ' },
          { tag: 'at', user_id: bobOpenId },
          { tag: 'text', text: ' and ' },
          { tag: 'at', user_id: 'all' },
        ],
      ]),
    });
    expect(text(post)).toBe(`ping @${bobOpenId} and @all`);
  });
});

describe('Feishu files in posts', () => {
  const resolve = (reference: string) => reference;

  it('notes top-level files[] and inline file elements like Slack files, once each', () => {
    const content = postContent(
      [
        [{ tag: 'text', text: 'fill in this table' }],
        [{ tag: 'file', file_key: 'file_v3_a', file_name: 'quota.xlsx' }],
      ],
      {
        files: [
          { file_key: 'file_v3_a', file_name: 'quota.xlsx', is_folder: false },
          { file_key: 'file_v3_b', file_name: 'notes.md', is_folder: false },
          { file_key: 'file_v3_c', file_name: 'designs', is_folder: true },
        ],
      },
    );
    expect(messageText('post', JSON.stringify(content), resolve)).toBe(
      [
        'fill in this table',
        '[attached file: quota.xlsx; Butler cannot open attachments]',
        '[attached file: notes.md; Butler cannot open attachments]',
        '[attached folder: designs; Butler cannot open attachments]',
      ].join('\n'),
    );
  });

  it('reads files of a post with no text, a locale-wrapped post, and flat content', () => {
    const filesOnly = { title: '', content: [[]], files: [{ file_key: 'f', file_name: 'note.py' }] };
    expect(messageText('post', JSON.stringify(filesOnly), resolve)).toBe(
      '[attached file: note.py; Butler cannot open attachments]',
    );
    const wrapped = {
      zh_cn: { title: '', content: [[{ tag: 'text', text: '看看' }]] },
      files: [{ key: 'f2', name: 'a.pdf' }],
    };
    expect(messageText('post', JSON.stringify(wrapped), resolve)).toBe(
      '看看\n[attached file: a.pdf; Butler cannot open attachments]',
    );
    const flat = {
      title: '',
      content: [
        { tag: 'text', text: 'one ' },
        { tag: 'text', text: 'row' },
      ],
    };
    expect(messageText('post', JSON.stringify(flat), resolve)).toBe('one row');
  });
});
