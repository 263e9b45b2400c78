import { describe, expect, it } from 'vitest';
import { parseMessageReceiveEvent } from '../../../src/adapters/feishu/event-payloads.js';
import { messageText } from '../../../src/adapters/feishu/message-content.js';
import { normalizeMessageEvent } from '../../../src/adapters/feishu/normalize.js';
import {
  aliceOpenId,
  bobOpenId,
  botMention,
  type MessageSpec,
  messageEvent,
  testBotOpenId,
  testTenantKey,
} from './feishu-events.js';

const now = 1_766_000_000_000;
const bot = { openId: testBotOpenId, userId: undefined, unionId: undefined, name: 'Butler' };
const context = { bot, nowMilliseconds: now, maxAgeMilliseconds: 30 * 60_000 };

/** What the SDK's EventDispatcher hands the handler: header and event fields flattened into one object. */
function flattened(spec: MessageSpec) {
  const envelope = messageEvent({ createTime: now - 1000, ...spec });
  const { header, event, ...rest } = envelope as { header: object; event: object };
  return { ...rest, ...header, ...event };
}

function normalize(spec: MessageSpec) {
  return normalizeMessageEvent(parseMessageReceiveEvent(flattened(spec)), context);
}

describe('Feishu message normalization', () => {
  it('takes a group message that mentions the bot, without the mention', () => {
    const result = normalize({
      messageId: 'om_1',
      eventId: 'ev_1',
      chatId: 'oc_team',
      text: '@_user_1 restart the api',
    });
    expect(result).toEqual({
      kind: 'message',
      message: {
        kind: 'message',
        address: { platform: 'feishu', workspace: testTenantKey, channel: 'oc_team', thread: 'om_1' },
        messageId: 'om_1',
        eventId: 'ev_1',
        dedupKey: 'om_1',
        user: { id: aliceOpenId },
        text: 'restart the api',
        isMention: true,
        isDirect: false,
        sentAt: new Date(now - 1000).toISOString(),
      },
    });
  });

  it('skips group messages that do not mention the bot, including mentions of someone else', () => {
    expect(normalize({ text: 'lunch?', mentions: [] })).toEqual({ kind: 'skip', reason: 'not_mentioned' });
    const other = normalize({
      text: '@_user_1 can you look?',
      mentions: [{ key: '@_user_1', openId: bobOpenId, name: 'Bob' }],
    });
    expect(other).toEqual({ kind: 'skip', reason: 'not_mentioned' });
  });

  it('matches the bot by open_id, never by placeholder, and names other people', () => {
    const result = normalize({
      text: '@_user_1 please ask @_user_2 and @_all',
      mentions: [
        { key: '@_user_1', openId: bobOpenId, name: 'Bob' },
        { key: '@_user_2', openId: testBotOpenId, name: 'Butler' },
      ],
    });
    expect(result.kind === 'message' && result.message.text).toBe('@Bob please ask and @all');
  });

  it('takes every direct message and shares the main thread', () => {
    const result = normalize({ chatType: 'p2p', chatId: 'oc_dm', text: 'hi there' });
    expect(result.kind).toBe('message');
    if (result.kind !== 'message') return;
    expect(result.message).toMatchObject({ isDirect: true, isMention: false, text: 'hi there' });
    expect(result.message.address.thread).toBe('main');
    const threaded = normalize({
      chatType: 'p2p',
      text: 'in a thread',
      threadId: 'omt_dm1',
      rootId: 'om_root',
    });
    expect(threaded.kind === 'message' && threaded.message.address.thread).toBe('omt_dm1');
  });

  it('keys threads on thread_id, then root_id, then the message id', () => {
    const thread = (spec: MessageSpec) => {
      const result = normalize(spec);
      return result.kind === 'message' ? result.message.address.thread : undefined;
    };
    expect(thread({ messageId: 'om_3', threadId: 'omt_1', rootId: 'om_root' })).toBe('omt_1');
    expect(thread({ messageId: 'om_3', rootId: 'om_root' })).toBe('om_root');
    expect(thread({ messageId: 'om_3' })).toBe('om_3');
  });

  it('skips messages older than the cutoff and messages not sent by a person', () => {
    expect(normalize({ createTime: now - 31 * 60_000 })).toEqual({ kind: 'skip', reason: 'too_old' });
    expect(normalize({ createTime: now - 29 * 60_000 }).kind).toBe('message');
    expect(normalize({ senderOpenId: testBotOpenId })).toEqual({ kind: 'skip', reason: 'not_from_user' });
  });

  it('flattens rich text, marking where its images are', () => {
    const post = normalize({
      messageType: 'post',
      content: {
        title: 'Incident',
        content: [
          [
            { tag: 'at', user_id: '@_user_1', user_name: 'Butler' },
            { tag: 'text', text: ' see ' },
            { tag: 'a', text: 'dashboard', href: 'https://grafana.example.com' },
          ],
          [{ tag: 'img', image_key: 'img_v3_1' }],
          [{ tag: 'code_block', language: 'BASH', text: 'kubectl get pods' }],
        ],
      },
    });
    expect(post.kind === 'message' && post.message.text).toBe(
      'Incident\nsee [dashboard](https://grafana.example.com)\n[image]\n\n```bash\nkubectl get pods\n```',
    );
  });

  it('still answers what Butler cannot fetch politely: stickers, voice messages', () => {
    const sticker = normalize({
      chatType: 'p2p',
      messageType: 'sticker',
      content: { file_key: 'v3_sticker' },
    });
    expect(sticker.kind === 'message' && sticker.message).toMatchObject({ text: '[sent a sticker]' });
    expect(sticker.kind === 'message' && sticker.message.files).toBeUndefined();
    const audio = normalize({ chatType: 'p2p', messageType: 'audio', content: { file_key: 'file_v3_a' } });
    expect(audio.kind === 'message' && audio.message.text).toContain('cannot listen');
  });

  it('never throws on odd content', () => {
    const resolve = (key: string) => key;
    expect(messageText('text', 'not json', resolve)).toBe('');
    expect(
      messageText('post', '{"zh_cn":{"title":"","content":[[{"tag":"text","text":"你好"}]]}}', resolve),
    ).toBe('你好');
    expect(messageText('post', '{"content":"oops"}', resolve)).toBe('');
    expect(messageText('file', '{"file_key":"f","file_name":"report.pdf"}', resolve)).toContain('report.pdf');
    expect(messageText('hongbao', '{}', resolve)).toBe('[sent a hongbao message, which Butler cannot read]');
    for (const type of ['sticker', 'audio', 'media', 'interactive', 'share_chat', 'location', 'system']) {
      expect(typeof messageText(type, '{}', resolve)).toBe('string');
    }
  });

  it('reads the shapes the dispatcher flattens and rejects payloads without ids', () => {
    const event = parseMessageReceiveEvent(flattened({ messageId: 'om_9', mentions: [botMention()] }));
    expect(event).toMatchObject({
      messageId: 'om_9',
      tenantKey: testTenantKey,
      chatType: 'group',
      senderType: 'user',
    });
    expect(() => parseMessageReceiveEvent({ message: {} })).toThrow(/message_id/);
    expect(() => parseMessageReceiveEvent(undefined)).toThrow();
  });
});
