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
  const body = (await response.json()) as { ok: boolean; error?: string };
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
});
