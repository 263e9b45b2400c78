import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CallOutcome } from '../../../src/adapters/pacing/index.js';
import { FakeFeishuApi } from '../../helpers/fake-feishu-api.js';
import { feishuClientFor } from '../../helpers/feishu-client.js';

/** Feishu calls go through the pacing layer at the documented limits (platforms.md §13, "Checked since"). */

let fake: FakeFeishuApi;

beforeEach(async () => {
  fake = await FakeFeishuApi.start();
});
afterEach(async () => {
  await fake.close();
});

/** The most calls that arrived within any `windowMs`. */
function busiestWindow(times: readonly number[], windowMs: number): number {
  const sorted = [...times].sort((left, right) => left - right);
  let most = 0;
  for (let first = 0, last = 0; last < sorted.length; last++) {
    while ((sorted[last] ?? 0) - (sorted[first] ?? 0) >= windowMs) first++;
    most = Math.max(most, last - first + 1);
  }
  return most;
}

describe('Feishu API pacing', () => {
  it('keeps CardKit updates of one card within 10 a second, in sequence order', async () => {
    const api = feishuClientFor(fake);
    const cardId = await api.createCard({
      schema: '2.0',
      config: { streaming_mode: true },
      body: { elements: [{ tag: 'markdown', element_id: 'text', content: '' }] },
    });
    await Promise.all(
      Array.from({ length: 15 }, (_, index) =>
        api.updateCardElement(cardId, 'text', `step ${index + 1}`, index + 1),
      ),
    );
    const updates = fake.callsTo('PUT', /\/elements\/text\/content$/);
    expect(updates.map((call) => call.code)).toEqual(Array(15).fill(0));
    expect(
      busiestWindow(
        updates.map((call) => call.at),
        1000,
      ),
    ).toBeLessThanOrEqual(10);
    expect(fake.cards.get(cardId)?.elements.get('text')).toBe('step 15');
  });

  it('tells its observer how each call ended, by operation: a throttled answer as rate_limited', async () => {
    const calls: Array<[string, CallOutcome]> = [];
    const api = feishuClientFor(fake, undefined, (operation, outcome) => calls.push([operation, outcome]));
    const destination = { chatId: 'oc_metrics', replyTo: undefined, replyInThread: false };
    const message = { msgType: 'text' as const, content: { text: 'hi' } };
    fake.rateLimit('/open-apis/im/v1/messages', 1, 'POST');
    await expect(api.sendMessage(destination, message)).rejects.toMatchObject({ rateLimited: true });
    await api.sendMessage(destination, message);
    fake.fail({ path: '/open-apis/bot/v3/info', status: 500, code: 1 });
    await expect(api.botInfo()).rejects.toThrow();
    await api.botInfo();
    expect(calls).toEqual([
      ['message create', 'rate_limited'],
      ['message create', 'ok'],
      ['bot info', 'error'],
      ['bot info', 'ok'],
    ]);
  });
});
