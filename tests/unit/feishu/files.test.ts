import { Readable } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createCardkitHealth } from '../../../src/adapters/feishu/cardkit-health.js';
import { createFeishuChatAdapter } from '../../../src/adapters/feishu/chat-adapter.js';
import { messageFiles } from '../../../src/adapters/feishu/message-files.js';
import { explainRefusal, readWithin } from '../../../src/adapters/feishu/resource-download.js';
import { defaultStreamSettings } from '../../../src/adapters/feishu/stream-settings.js';
import { FeishuUserNames } from '../../../src/adapters/feishu/user-names.js';
import type { ChatAdapter, ReplyTarget } from '../../../src/core/contracts/adapter.js';
import { FileTooLargeError, type InboundFile, type OutboundFile } from '../../../src/core/contracts/files.js';
import { silentLogger } from '../../../src/core/contracts/logger.js';
import { FakeFeishuApi } from '../../helpers/fake-feishu-api.js';
import { feishuClientFor } from '../../helpers/feishu-client.js';
import { testTenantKey as tenantKey, uniqueId } from './feishu-events.js';

/** Fetching the files people send and sending files back, through the real Lark SDK against the fake (issue 24). */

/** A 1×1 PNG. */
const png = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);
const csv = 'service,restarts\npayments,3\nsearch,0\n';

let fake: FakeFeishuApi;
let adapter: ChatAdapter;

beforeAll(async () => {
  fake = await FakeFeishuApi.start();
  const api = feishuClientFor(fake);
  adapter = createFeishuChatAdapter({
    api,
    logger: silentLogger,
    now: Date.now,
    settings: defaultStreamSettings,
    cardkit: createCardkitHealth(),
    names: new FeishuUserNames(api, silentLogger),
  });
});
afterAll(() => fake.close());
afterEach(() => {
  fake.restore();
  fake.files.scopeMissing = false;
});

function sharedFile(
  type: 'image' | 'file',
  name: string,
): InboundFile & { messageId: string; fileKey: string } {
  const messageId = uniqueId('om_');
  const fileKey = uniqueId(type === 'image' ? 'img_v3_' : 'file_v3_');
  return {
    messageId,
    fileKey,
    key: `${messageId}/${fileKey}`,
    name,
    locator: JSON.stringify({ messageId, fileKey, type }),
  };
}

function outbound(name: string, mimeType: string, bytes: Uint8Array): OutboundFile {
  return { id: uniqueId('file_'), name, mimeType, bytes };
}

/** A reply target inside a topic thread of a group, answering `replyTo`. */
function threadTarget(): ReplyTarget {
  const replyTo = uniqueId('om_user_');
  return {
    address: { platform: 'feishu', workspace: 'tenant', channel: 'oc_team', thread: uniqueId('omt_') },
    replyTo,
    userId: 'ou_alice',
  };
}

describe('Feishu fetchFile', () => {
  it('downloads an image once with the tenant token, typed by the answer', async () => {
    const file = sharedFile('image', 'image.png');
    fake.files.addResource(file.messageId, file.fileKey, {
      type: 'image',
      bytes: png,
      contentType: 'image/png',
    });
    const fetched = await adapter.fetchFile?.(file, { maxBytes: 1024, workspace: tenantKey });
    expect(fetched).toEqual({ name: 'image.png', mimeType: 'image/png', bytes: expect.any(Uint8Array) });
    expect(Buffer.from(fetched?.bytes ?? []).equals(png)).toBe(true);
    const [call] = fake.callsTo(
      'GET',
      `/open-apis/im/v1/messages/${file.messageId}/resources/${file.fileKey}`,
    );
    expect(call?.query).toEqual({ type: 'image' });
    expect(call?.authorization).toMatch(/^Bearer t-/);
    expect(fake.files.downloads(file.messageId, file.fileKey)).toBe(1);
  });

  it('downloads a file as type file, keeping its name and the MIME type without parameters', async () => {
    const file = sharedFile('file', 'restarts.csv');
    fake.files.addResource(file.messageId, file.fileKey, {
      type: 'file',
      bytes: csv,
      contentType: 'text/csv; charset=utf-8',
    });
    const fetched = await adapter.fetchFile?.(file, { maxBytes: 1024, workspace: tenantKey });
    expect(fetched?.mimeType).toBe('text/csv');
    expect(Buffer.from(fetched?.bytes ?? []).toString()).toBe(csv);
  });

  it('refuses a file over maxBytes without keeping any of it', async () => {
    const file = sharedFile('file', 'dump.bin');
    fake.files.addResource(file.messageId, file.fileKey, {
      type: 'file',
      bytes: Buffer.alloc(4096, 7),
      contentType: 'application/octet-stream',
    });
    await expect(adapter.fetchFile?.(file, { maxBytes: 4095, workspace: tenantKey })).rejects.toBeInstanceOf(
      FileTooLargeError,
    );
    const exact = await adapter.fetchFile?.(file, { maxBytes: 4096, workspace: tenantKey });
    expect(exact?.bytes.byteLength).toBe(4096);
  });

  it('stops reading a stream at the limit when the answer does not say its length', async () => {
    const chunks = [Buffer.alloc(600, 1), Buffer.alloc(600, 2), Buffer.alloc(600, 3)];
    const stream = Readable.from(chunks);
    await expect(readWithin(stream, 1000)).rejects.toEqual(new FileTooLargeError(1000));
    expect(stream.destroyed).toBe(true);
    expect((await readWithin(Readable.from(chunks), 1800)).length).toBe(1800);
  });

  it('names the scope to add when Feishu says the app lacks it', async () => {
    const file = sharedFile('image', 'image.png');
    fake.files.addResource(file.messageId, file.fileKey, {
      type: 'image',
      bytes: png,
      contentType: 'image/png',
    });
    fake.files.scopeMissing = true;
    const failure = adapter.fetchFile?.(file, { maxBytes: 1024, workspace: tenantKey });
    await expect(failure).rejects.toThrow(/code 99991672\): the Feishu app lacks a permission/);
    await expect(adapter.fetchFile?.(file, { maxBytes: 1024, workspace: tenantKey })).rejects.toThrow(
      /One of the following scopes is required: \[im:message.*\]\."\); add one of those scopes under Permissions & Scopes/,
    );
    expect(explainRefusal(99991672, undefined, 'im:resource')).toBe(
      'the Feishu app lacks a permission; add im:resource under Permissions & Scopes and publish a new version',
    );
    expect(fake.files.downloads(file.messageId, file.fileKey)).toBe(0);
  });

  it("fails with Feishu's code for a key the message does not carry, or a locator that is not Feishu's", async () => {
    const file = sharedFile('file', 'gone.pdf');
    await expect(adapter.fetchFile?.(file, { maxBytes: 1024, workspace: tenantKey })).rejects.toThrow(
      /message resource get failed \(HTTP 400, code 234003\): Feishu says: resource not found/,
    );
    await expect(
      adapter.fetchFile?.({ ...file, locator: 'F0SLACK' }, { maxBytes: 1024, workspace: tenantKey }),
    ).rejects.toThrow(/Not a Feishu file locator/);
  });

  it('never puts a key that is not a Feishu key into the resource URL, nor a message listing one', async () => {
    const crafted = '../../../../../contact/v3/users/ou_x?user_id_type=open_id&x=';
    const messageId = uniqueId('om_');
    const locator = JSON.stringify({ messageId, fileKey: crafted, type: 'file' });
    const file = { key: `${messageId}/x`, name: 'x.pdf', locator };
    await expect(adapter.fetchFile?.(file, { maxBytes: 1024, workspace: tenantKey })).rejects.toThrow(
      /Not a Feishu file locator/,
    );
    expect(
      messageFiles(messageId, 'file', JSON.stringify({ file_key: crafted, file_name: 'x.pdf' })),
    ).toEqual([]);
    expect(
      messageFiles(messageId, 'file', JSON.stringify({ file_key: 'file_v3_ok-1', file_name: 'a' })),
    ).toHaveLength(1);
    expect(fake.calls.filter((call) => call.path.includes('contact'))).toEqual([]);
  });

  it('stops waiting for Feishu when the turn is stopped', async () => {
    const file = sharedFile('image', 'slow.png');
    fake.files.addResource(file.messageId, file.fileKey, {
      type: 'image',
      bytes: png,
      contentType: 'image/png',
    });
    fake.fail({ path: /\/resources\//, delayMs: 1_500 });
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(), 50);
    await expect(
      adapter.fetchFile?.(file, { maxBytes: 1024, signal: controller.signal, workspace: tenantKey }),
    ).rejects.toThrow(/aborted/);
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});

describe('Feishu sendFile', () => {
  it('sends a PNG as an image message in the thread of the message it answers', async () => {
    const target = threadTarget();
    const messageId = await adapter.sendFile?.(target, outbound('chart.png', 'image/png', png));
    const [upload] = fake.callsTo('POST', '/open-apis/im/v1/images').slice(-1);
    expect(upload?.contentType).toMatch(/^multipart\/form-data; boundary=/);
    const message = fake.messages.get(messageId ?? '');
    expect(message).toMatchObject({
      chatId: 'oc_from_event',
      msgType: 'image',
      replyTo: target.replyTo,
      replyInThread: true,
    });
    expect(message?.upload).toMatchObject({ kind: 'image', imageType: 'message' });
    expect(message?.upload?.bytes.equals(png)).toBe(true);
    expect(message?.content).toEqual({ image_key: message?.upload?.key });
  });

  it('sends a CSV as a file message in the thread, with its name and bytes', async () => {
    const target = threadTarget();
    const messageId = await adapter.sendFile?.(
      target,
      outbound('restarts.csv', 'text/csv', Buffer.from(csv)),
    );
    const message = fake.messages.get(messageId ?? '');
    expect(message).toMatchObject({ msgType: 'file', replyTo: target.replyTo, replyInThread: true });
    expect(message?.upload).toMatchObject({ kind: 'file', fileType: 'stream', fileName: 'restarts.csv' });
    expect(message?.upload?.bytes.toString()).toBe(csv);
    expect(fake.callsTo('POST', '/open-apis/im/v1/images')).toHaveLength(1);
  });

  it('posts into a direct chat, types a PDF as pdf, and sends an image over 10 MB as a file', async () => {
    const direct: ReplyTarget = {
      address: { platform: 'feishu', workspace: 'tenant', channel: 'oc_dm', thread: 'main' },
      replyTo: uniqueId('om_user_'),
      userId: 'ou_alice',
    };
    const pdf = await adapter.sendFile?.(
      direct,
      outbound('Q3.PDF', 'application/pdf', Buffer.from('%PDF-1.7')),
    );
    expect(fake.messages.get(pdf ?? '')).toMatchObject({
      chatId: 'oc_dm',
      replyTo: undefined,
      msgType: 'file',
    });
    expect(fake.messages.get(pdf ?? '')?.upload?.fileType).toBe('pdf');
    const huge = Buffer.alloc(10 * 1024 * 1024 + 1, 0);
    const large = await adapter.sendFile?.(direct, outbound('scan.png', 'image/png', huge));
    expect(fake.messages.get(large ?? '')?.upload).toMatchObject({ kind: 'file', fileName: 'scan.png' });
  });

  it('refuses empty files and files over 30 MB before uploading anything', async () => {
    const uploads = () => fake.calls.filter((call) => /\/im\/v1\/(images|files)$/.test(call.path)).length;
    const before = uploads();
    await expect(
      adapter.sendFile?.(threadTarget(), outbound('empty.txt', 'text/plain', new Uint8Array())),
    ).rejects.toThrow(/does not take empty files/);
    const tooBig = outbound('backup.tar', 'application/x-tar', new Uint8Array(30 * 1024 * 1024 + 1));
    await expect(adapter.sendFile?.(threadTarget(), tooBig)).rejects.toThrow(/up to 30 MB/);
    expect(uploads()).toBe(before);
  });

  it('names the scope to add when Feishu refuses the upload', async () => {
    fake.files.scopeMissing = true;
    const sent = adapter.sendFile?.(threadTarget(), outbound('chart.png', 'image/png', png));
    await expect(sent).rejects.toThrow(
      /image create failed \(HTTP 400, code 99991672\).*\[im:resource, im:resource:upload\].*add one of those/,
    );
  });
});
