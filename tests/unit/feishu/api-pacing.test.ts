import { afterEach, beforeEach, describe, expect, it } from 'vitest';
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
});
