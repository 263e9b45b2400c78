import { describe, expect, it } from 'vitest';
import {
  type LaneSpec,
  Pacer,
  type Priority,
  type RetryPolicy,
  WaitAbandoned,
} from '../../../src/adapters/pacing/index.js';

/** Who goes first on a full lane, waits given up, room reserved ahead, and a process's share of a budget. */

const lane = (key: string, limit: number, windowMs: number, owned = false): LaneSpec => ({
  key,
  limits: [{ limit, windowMs }],
  ...(owned ? { owned } : {}),
});
const noRetries: RetryPolicy = { retries: 0, retryAfterMs: () => undefined };

describe('Pacer priorities', () => {
  it('lets a waiting reply go before routine and cosmetic calls that asked earlier, keeping order within each', async () => {
    const pacer = new Pacer();
    const full = lane('chat.update', 1, 150);
    const order: string[] = [];
    const call = (name: string, priority: Priority) =>
      pacer.run('chat.update', [full], async () => order.push(name), noRetries, { priority });
    await call('first', 'reply');
    await Promise.all([
      call('status', 'cosmetic'),
      call('reminder', 'routine'),
      call('reply 1', 'reply'),
      call('reply 2', 'reply'),
      call('home', 'routine'),
    ]);
    expect(order).toEqual(['first', 'reply 1', 'reply 2', 'reminder', 'home', 'status']);
  });

  it('forgets a wait whose signal aborts: the call never goes and counts nowhere', async () => {
    const pacer = new Pacer();
    const full = lane('views.publish', 1, 200);
    await pacer.run('views.publish', [full], async () => 'first', noRetries);
    const abort = new AbortController();
    let sent = false;
    const given = pacer.run(
      'views.publish',
      [full],
      async () => {
        sent = true;
      },
      noRetries,
      { priority: 'cosmetic', signal: abort.signal },
    );
    const next = pacer.run('views.publish', [full], async () => Date.now(), noRetries);
    abort.abort();
    await expect(given).rejects.toBeInstanceOf(WaitAbandoned);
    const started = Date.now();
    expect(await next).toBeLessThan(started + 400);
    expect(sent).toBe(false);
  });

  it('reserves room now for a call made later; a released reservation frees it at once', async () => {
    const pacer = new Pacer();
    const stop = lane('chat.stopStream', 1, 60_000);
    const reserved = pacer.reserve('chat.stopStream', stop);
    expect(reserved).toBeDefined();
    // The room is taken: nobody else may reserve or run without waiting.
    expect(pacer.reserve('chat.stopStream', stop)).toBeUndefined();
    expect(pacer.runIfFree('chat.stopStream', [stop], async () => 'other', noRetries)).toBeUndefined();
    if (!reserved) return;
    expect(await pacer.runReserved(reserved, async () => 'stopped', noRetries)).toBe('stopped');
    expect(() => pacer.runReserved(reserved, async () => 'twice', noRetries)).toThrow(/already used/);

    const unused = pacer.reserve('chat.stopStream', lane('chat.stopStream:other', 1, 60_000));
    unused?.release();
    expect(pacer.reserve('chat.stopStream', lane('chat.stopStream:other', 1, 60_000))).toBeDefined();
  });

  it("paces to this process's share of a budget, rounded down but never to nothing; owned lanes keep all of it", async () => {
    let share = 0.5;
    const pacer = new Pacer({ share: () => share });
    const tier = lane('chat.startStream', 20, 60_000);
    const sent = () =>
      Array.from({ length: 25 }, () =>
        pacer.runIfFree('chat.startStream', [tier], async () => true, noRetries),
      ).filter((call) => call !== undefined).length;
    expect(sent()).toBe(10);
    share = 0.01;
    expect(
      pacer.runIfFree('chat.startStream', [lane('other', 20, 60_000)], async () => 1, noRetries),
    ).toBeDefined();
    expect(
      pacer.runIfFree('chat.startStream', [lane('other', 20, 60_000)], async () => 1, noRetries),
    ).toBeUndefined();
    const card = lane('card:1', 10, 1000, true);
    const onCard = Array.from({ length: 12 }, () =>
      pacer.runIfFree('card', [card], async () => true, noRetries),
    ).filter((call) => call !== undefined);
    expect(onCard).toHaveLength(10);
    // Shares stretch the repeating callers' spacing too: 100 a minute at half is one per 1.2 s.
    share = 0.5;
    expect(pacer.share(lane('chat.appendStream', 100, 60_000)).intervalMs()).toBe(1200);
  });
});
