import { describe, expect, it } from 'vitest';
import { parseMessageReceiveEvent } from '../../../src/adapters/feishu/event-payloads.js';
import { messageText } from '../../../src/adapters/feishu/message-content.js';
import { parseFileLocator } from '../../../src/adapters/feishu/message-files.js';
import { normalizeMessageEvent } from '../../../src/adapters/feishu/normalize.js';
import { type MessageSpec, messageEvent, testBotOpenId } from './feishu-events.js';

/** Images and files people send become `InboundMessage.files` the core fetches (issue 24). */

const now = 1_766_000_000_000;
const bot = { openId: testBotOpenId, userId: undefined, unionId: undefined, name: 'Butler' };

function normalized(spec: MessageSpec) {
  const envelope = messageEvent({ createTime: now - 1000, ...spec });
  const { header, event } = envelope as { header: object; event: object };
  const result = normalizeMessageEvent(parseMessageReceiveEvent({ ...header, ...event }), {
    bot,
    nowMilliseconds: now,
    maxAgeMilliseconds: 30 * 60_000,
  });
  if (result.kind !== 'message') throw new Error(`skipped: ${result.reason}`);
  return result.message;
}

const locator = (messageId: string, fileKey: string, type: 'image' | 'file') =>
  JSON.stringify({ messageId, fileKey, type });

describe('Feishu files on received messages', () => {
  it('takes an image message with no text as a message carrying the image', () => {
    const message = normalized({
      messageId: 'om_img',
      chatType: 'p2p',
      messageType: 'image',
      content: { image_key: 'img_v3_02ab' },
    });
    expect(message.text).toBe('');
    expect(message.files).toEqual([
      {
        key: 'om_img/img_v3_02ab',
        name: 'image-img_v3_02ab.png',
        locator: locator('om_img', 'img_v3_02ab', 'image'),
      },
    ]);
    expect(parseFileLocator(message.files?.[0]?.locator ?? '')).toEqual({
      messageId: 'om_img',
      fileKey: 'img_v3_02ab',
      type: 'image',
    });
  });

  it('takes file and video messages by their file_key and name, fetched as type file', () => {
    const file = normalized({
      messageId: 'om_file',
      chatType: 'p2p',
      messageType: 'file',
      content: { file_key: 'file_v3_00cd', file_name: 'q3-report.pdf' },
    });
    expect(file.text).toBe('');
    expect(file.files).toEqual([
      {
        key: 'om_file/file_v3_00cd',
        name: 'q3-report.pdf',
        locator: locator('om_file', 'file_v3_00cd', 'file'),
      },
    ]);
    const video = normalized({
      messageId: 'om_video',
      chatType: 'p2p',
      messageType: 'media',
      content: { file_key: 'file_v3_00ef', image_key: 'img_v3_cover', file_name: 'demo.mp4', duration: 2000 },
    });
    expect(video.files?.map((item) => [item.name, item.locator])).toEqual([
      ['demo.mp4', locator('om_video', 'file_v3_00ef', 'file')],
    ]);
  });

  it("takes a post's images, videos and files once each, and notes only folders", () => {
    const message = normalized({
      messageId: 'om_post',
      messageType: 'post',
      content: {
        title: '',
        content: [
          [
            { tag: 'at', user_id: '@_user_1', user_name: 'Butler' },
            { tag: 'text', text: ' compare ' },
            { tag: 'file', file_key: 'file_v3_a', file_name: 'quota.xlsx' },
          ],
          [{ tag: 'img', image_key: 'img_v3_1', width: 300, height: 200 }],
          [{ tag: 'media', file_key: 'file_v3_v', image_key: 'img_v3_cover' }],
        ],
        files: [
          { file_key: 'file_v3_a', file_name: 'quota.xlsx', is_folder: false },
          { file_key: 'file_v3_b', file_name: 'notes.md', is_folder: false },
          { file_key: 'file_v3_c', file_name: 'designs', is_folder: true },
        ],
      },
    });
    expect(message.text).toBe(
      'compare [file: quota.xlsx]\n[image]\n[video]\n[attached folder: designs; Butler cannot open attachments]',
    );
    expect(message.files?.map((item) => [item.key, item.name, JSON.parse(item.locator).type])).toEqual([
      ['om_post/file_v3_a', 'quota.xlsx', 'file'],
      ['om_post/img_v3_1', 'image-img_v3_1.png', 'image'],
      ['om_post/file_v3_v', 'video-file_v3_v.mp4', 'file'],
      ['om_post/file_v3_b', 'notes.md', 'file'],
    ]);
  });

  it('keeps the notes where the files are not fetched: a forwarded message, a post with only a folder', () => {
    const resolve = (key: string) => key;
    expect(messageText('image', '{"image_key":"img_v3_9"}', resolve)).toBe(
      '[sent an image, which Butler cannot view]',
    );
    const folderOnly = normalized({
      chatType: 'p2p',
      messageType: 'post',
      content: {
        title: '',
        content: [[]],
        files: [{ file_key: 'f', file_name: 'designs', is_folder: true }],
      },
    });
    expect(folderOnly.files).toBeUndefined();
    expect(folderOnly.text).toBe('[attached folder: designs; Butler cannot open attachments]');
    const keyless = normalized({ chatType: 'p2p', messageType: 'image', content: {} });
    expect(keyless.files).toBeUndefined();
    expect(keyless.text).toBe('[sent an image, which Butler cannot view]');
  });

  it('refuses a locator that is not one of its own', () => {
    for (const bad of [
      '',
      'https://files.slack.com/x',
      '{"messageId":"om_1","fileKey":"k","type":"audio"}',
    ]) {
      expect(() => parseFileLocator(bad)).toThrow(/Not a Feishu file locator/);
    }
  });
});
