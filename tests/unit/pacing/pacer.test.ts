import { describe, expect, it } from 'vitest';
import {
  type CallOutcome,
  type LaneSpec,
  Pacer,
  type RetryPolicy,
} from '../../../src/adapters/pacing/index.js';

/** The pacing layer's arithmetic, on short windows so the test runs in real time. */

const lane = (key: string, limit: number, windowMs: number): LaneSpec => ({
  key,
  limits: [{ limit, windowMs }],
});
const noRetries: RetryPolicy = { retries: 0, retryAfterMs: () => undefined };

class RateLimited extends Error {
  constructor(readonly afterMs: number) {
    super('rate limited');
  }
}
const honourRetryAfter: RetryPolicy = {
  retries: 2,
  retryAfterMs: (error) => (error instanceof RateLimited ? error.afterMs : undefined),
};

describe('Pacer', () => {
  it('lets `limit` calls through at once, then the next when the oldest leaves the window, in order', async () => {
    const pacer = new Pacer();
    const started = Date.now();
    const finished: Array<{ index: number; at: number }> = [];
    await Promise.all(
      Array.from({ length: 5 }, (_, index) =>
        pacer.run(
          'method',
          [lane('method', 3, 200)],
          async () => finished.push({ index, at: Date.now() - started }),
          noRetries,
        ),
      ),
    );
    expect(finished.map((call) => call.index)).toEqual([0, 1, 2, 3, 4]);
    expect(finished.slice(0, 3).every((call) => call.at < 100)).toBe(true);
    expect(finished.slice(3).every((call) => call.at >= 190)).toBe(true);
  });

  it('runs a call only if there is room now, sending nothing otherwise', async () => {
    const pacer = new Pacer();
    let sent = 0;
    const attempt = async () => ++sent;
    expect(await pacer.runIfFree('start', [lane('start', 1, 10_000)], attempt, noRetries)).toBe(1);
    expect(pacer.runIfFree('start', [lane('start', 1, 10_000)], attempt, noRetries)).toBeUndefined();
    expect(sent).toBe(1);
  });

  it("backs off the rate-limited lane for its Retry-After and retries, while other lanes' calls go on", async () => {
    const pacer = new Pacer();
    const started = Date.now();
    let attempts = 0;
    const limited = pacer.run(
      'update',
      [lane('update', 100, 1000)],
      async () => {
        attempts += 1;
        if (attempts === 1) throw new RateLimited(300);
        return Date.now() - started;
      },
      honourRetryAfter,
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    const other = await pacer.run(
      'start',
      [lane('start', 100, 1000)],
      async () => Date.now() - started,
      noRetries,
    );
    const sameMethod = pacer.run(
      'update',
      [lane('update', 100, 1000)],
      async () => Date.now() - started,
      noRetries,
    );
    expect(other).toBeLessThan(100);
    expect(await limited).toBeGreaterThanOrEqual(290);
    expect(await sameMethod).toBeGreaterThanOrEqual(290);
  });

  it("gives up after the policy's retries with the platform's error", async () => {
    const pacer = new Pacer();
    const failing = pacer.run(
      'update',
      [lane('update', 100, 1000)],
      async () => {
        throw new RateLimited(10);
      },
      honourRetryAfter,
    );
    await expect(failing).rejects.toBeInstanceOf(RateLimited);
  });

  it('tells its observer how each attempt ended, by method: a retried 429 is two calls', async () => {
    const calls: Array<[string, CallOutcome]> = [];
    const pacer = new Pacer({ onCall: (method, outcome) => calls.push([method, outcome]) });
    let attempts = 0;
    await pacer.run(
      'chat.update',
      [lane('update', 100, 1000)],
      async () => {
        attempts += 1;
        if (attempts === 1) throw new RateLimited(0);
      },
      honourRetryAfter,
    );
    const broken = pacer.run(
      'chat.delete',
      [],
      async () => {
        throw new Error('channel_not_found');
      },
      honourRetryAfter,
    );
    await expect(broken).rejects.toThrow('channel_not_found');
    // Refused as too many without a wait to honour (Feishu's answers): counted, not retried.
    const throttled = pacer.run(
      'message reply',
      [],
      async () => {
        throw new Error('frequency limit');
      },
      { ...noRetries, rateLimited: (error) => error instanceof Error && error.message === 'frequency limit' },
    );
    await expect(throttled).rejects.toThrow('frequency limit');
    expect(await pacer.runIfFree('start', [lane('start', 1, 10_000)], async () => 'sent', noRetries)).toBe(
      'sent',
    );
    // No room: nothing is sent, so nothing is counted.
    expect(
      pacer.runIfFree('start', [lane('start', 1, 10_000)], async () => 'sent', noRetries),
    ).toBeUndefined();
    expect(calls).toEqual([
      ['chat.update', 'rate_limited'],
      ['chat.update', 'ok'],
      ['chat.delete', 'error'],
      ['message reply', 'rate_limited'],
      ['start', 'ok'],
    ]);
  });

  it("stretches each sharer's interval with the number sharing, and shrinks it as they leave", () => {
    const pacer = new Pacer();
    const append = lane('append', 100, 60_000);
    const first = pacer.share(append);
    expect(first.intervalMs()).toBe(600);
    const others = Array.from({ length: 9 }, () => pacer.share(append));
    expect(first.intervalMs()).toBe(6000);
    for (const share of others) share.leave();
    expect(first.intervalMs()).toBe(600);
  });

  it('stops counting a sharer that has not asked for a whole window (a reply that never finished)', () => {
    let now = 0;
    const pacer = new Pacer({ now: () => now });
    const append = lane('append', 100, 60_000);
    const live = pacer.share(append);
    pacer.share(append).intervalMs();
    expect(live.intervalMs()).toBe(1200);
    now = 61_000;
    expect(live.intervalMs()).toBe(600);
  });
});
