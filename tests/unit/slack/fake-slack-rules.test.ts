import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FakeSlackApi, startFakeSlackApi } from '../../helpers/fake-slack-api.js';

/** The fake refuses what Slack refuses (platforms.md "Checked since"), so Butler's tests cannot pass on a shape Slack would not take. */

let fake: FakeSlackApi;

beforeEach(async () => {
  fake = await startFakeSlackApi();
});
afterEach(async () => {
  await fake.close();
});

async function call(method: string, args: Record<string, unknown>) {
  const response = await fetch(`${fake.url}${method}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer xoxb-test' },
    body: JSON.stringify(args),
  });
  const body = (await response.json()) as {
    ok: boolean;
    error?: string;
    upload_url?: string;
    file_id?: string;
  };
  return { status: response.status, retryAfter: response.headers.get('retry-after'), ...body };
}

const recipients = { recipient_user_id: 'U0ALICE', recipient_team_id: 'T0BUTLER' };

describe('the fake Slack API, strict as Slack', () => {
  it.each([
    ['a DM top level without thread_ts', { channel: 'D0ALICE' }, 'invalid_arguments'],
    ['a channel top level without thread_ts', { channel: 'C0GENERAL', ...recipients }, 'invalid_arguments'],
    [
      'a channel thread without recipient_user_id',
      { channel: 'C0GENERAL', thread_ts: '1.1', recipient_team_id: 'T0BUTLER' },
      'missing_recipient_user_id',
    ],
    [
      'a channel thread without recipient_team_id',
      { channel: 'C0GENERAL', thread_ts: '1.1', recipient_user_id: 'U0ALICE' },
      'missing_recipient_team_id',
    ],
  ])('refuses chat.startStream in %s', async (_label, args, error) => {
    expect(await call('chat.startStream', { ...args, markdown_text: 'hi' })).toMatchObject({
      ok: false,
      error,
    });
  });

  it('streams a reply in a DM thread without recipients, and in a channel thread with them', async () => {
    const dm = await call('chat.startStream', { channel: 'D0ALICE', thread_ts: '1.1', markdown_text: 'hi' });
    const channel = await call('chat.startStream', {
      channel: 'C0GENERAL',
      thread_ts: '1.1',
      markdown_text: 'hi',
      ...recipients,
    });
    expect([dm.ok, channel.ok]).toEqual([true, true]);
  });

  it('answers 429 with Retry-After past a method tier when tiers are on, per method, and not when off', async () => {
    const start = () =>
      call('chat.startStream', { channel: 'D0ALICE', thread_ts: '1.1', markdown_text: 'hi' });
    for (let index = 0; index < 21; index++) expect((await start()).ok).toBe(true);
    fake.rateTiers = true;
    // Tier 2: 20 a minute, counted only while the tiers are on.
    for (let index = 0; index < 20; index++) expect((await start()).ok).toBe(true);
    const limited = await start();
    expect(limited).toMatchObject({ status: 429, ok: false, error: 'ratelimited' });
    expect(Number(limited.retryAfter)).toBeGreaterThanOrEqual(50);
    expect(fake.rateLimited.map((recorded) => recorded.method)).toEqual(['chat.startStream']);
    // Another method's budget is its own.
    expect((await call('chat.postMessage', { channel: 'C0GENERAL', text: 'hi' })).ok).toBe(true);
  });

  it('serves a file only to the bot token, and sends anyone else to sign in', async () => {
    const file = fake.files.add({ name: 'a.txt', mimetype: 'text/plain', bytes: Buffer.from('hello') });
    const url = String(file.url_private_download);
    const get = (authorization?: string) =>
      fetch(url, { redirect: 'manual', headers: authorization ? { authorization } : {} });
    for (const stranger of [await get(), await get('Bearer xoxb-other')]) {
      expect(stranger.status).toBe(302);
      expect(stranger.headers.get('location')).toMatch(/\/signin\?redir=/);
    }
    const served = await get('Bearer xoxb-test');
    expect([served.status, await served.text()]).toEqual([200, 'hello']);
    fake.files.readScope = false;
    const withoutScope = await get('Bearer xoxb-test');
    expect(withoutScope.headers.get('content-type')).toMatch(/^text\/html/);
    expect(fake.files.downloads(String(file.id))).toBe(1);
  });

  it('takes the external upload only as Slack documents it', async () => {
    expect(await call('files.getUploadURLExternal', { length: 5 })).toMatchObject({
      error: 'invalid_arguments',
    });
    expect(await call('files.getUploadURLExternal', { filename: 'a.txt' })).toMatchObject({
      error: 'invalid_arguments',
    });
    expect(await call('files.getUploadURLExternal', { filename: 'a.txt', length: 0 })).toMatchObject({
      error: 'missing_argument',
    });
    const upload = await call('files.getUploadURLExternal', { filename: 'a.txt', length: 5 });
    const complete = (args: Record<string, unknown>) =>
      call('files.completeUploadExternal', { files: [{ id: upload.file_id, title: 'A' }], ...args });
    // Not uploaded yet, and then with the wrong number of bytes.
    expect(await complete({ channel_id: 'C0GENERAL' })).toMatchObject({ error: 'file_not_found' });
    const post = (body: string) => fetch(String(upload.upload_url), { method: 'POST', body });
    expect((await post('hello!')).status).toBe(400);
    expect((await post('hello')).status).toBe(200);
    expect(await complete({})).toMatchObject({ error: 'invalid_arguments' });
    expect(
      await call('files.completeUploadExternal', { files: [{ id: 'F0NOPE' }], channel_id: 'C0GENERAL' }),
    ).toMatchObject({
      error: 'file_not_found',
    });
    expect(await complete({ channel_id: 'C0GENERAL', thread_ts: '1.1' })).toMatchObject({ ok: true });
    expect(fake.files.uploads).toMatchObject([{ channel: 'C0GENERAL', threadTs: '1.1', title: 'A' }]);
    // Completed once: the id is spent.
    expect(await complete({ channel_id: 'C0GENERAL' })).toMatchObject({ error: 'file_not_found' });
  });
});
