import { describe, expect, it } from 'vitest';
import { Coalescer, type LaneSpec, Pacer, type RetryPolicy } from '../../../src/adapters/pacing/index.js';

/** Cosmetic calls: the latest state per key, sent when there is room, never waited on, dropped when stale. */

const noRetries: RetryPolicy = { retries: 0, retryAfterMs: () => undefined };
type Status = 'processing' | 'active' | 'suspended';

function setup(options: { limit: number; windowMs: number; maxWaitMs?: number }) {
  const pacer = new Pacer();
  const sent: Array<[string, Status]> = [];
  const dropped: Array<[string, Status, string]> = [];
  let failNext = false;
  const coalescer = new Coalescer<Status>({
    pacer,
    policy: noRetries,
    // As Slack's sessions: only `processing` makes one.
    unneeded: (shown, next) => shown === next || (shown === undefined && next !== 'processing'),
    maxWaitMs: options.maxWaitMs ?? 60_000,
    onDropped: (key, state, reason) => dropped.push([key, state, reason]),
  });
  const lanes: LaneSpec[] = [
    { key: 'setStatus', limits: [{ limit: options.limit, windowMs: options.windowMs }] },
  ];
  const set = (key: string, state: Status) =>
    coalescer.set(key, state, {
      method: 'agents.sessions.setStatus',
      lanes,
      send: async (value) => {
        if (failNext) {
          failNext = false;
          throw new Error('feature_disabled');
        }
        sent.push([key, value]);
      },
    });
  return { pacer, coalescer, sent, dropped, set, failNextCall: () => (failNext = true) };
}

describe('Coalescer', () => {
  it('sends the latest state of a key when room comes, never a state already shown', async () => {
    const { set, sent, pacer } = setup({ limit: 1, windowMs: 150 });
    // A reply takes the only room first.
    await pacer.run(
      'agents.sessions.setStatus',
      [{ key: 'setStatus', limits: [{ limit: 1, windowMs: 150 }] }],
      async () => {},
      noRetries,
    );
    const first = set('thread-1', 'processing');
    const replaced = set('thread-1', 'suspended');
    await Promise.all([first, replaced]);
    // `processing` never left: `suspended` (a session must first be made) replaced it with nothing to send.
    expect(sent).toEqual([]);
    await set('thread-2', 'processing');
    await set('thread-2', 'processing');
    await set('thread-2', 'active');
    expect(sent).toEqual([
      ['thread-2', 'processing'],
      ['thread-2', 'active'],
    ]);
  });

  it('never follows a dropped `processing` with an end, and drops what waited past its deadline', async () => {
    const { set, sent, dropped, pacer } = setup({ limit: 1, windowMs: 10_000, maxWaitMs: 100 });
    await pacer.run(
      'agents.sessions.setStatus',
      [{ key: 'setStatus', limits: [{ limit: 1, windowMs: 10_000 }] }],
      async () => {},
      noRetries,
    );
    const started = Date.now();
    await set('thread', 'processing');
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(dropped).toEqual([['thread', 'processing', 'expired']]);
    await set('thread', 'active');
    expect(sent).toEqual([]);
  });

  it('sends the end after a start already on its way, in order, and takes a state Slack showed by another call', async () => {
    const { set, sent, coalescer } = setup({ limit: 10, windowMs: 1000 });
    const start = set('thread', 'processing');
    // The start has left: its end must follow it, whatever the start's answer.
    await new Promise((resolve) => setTimeout(resolve, 0));
    const end = set('thread', 'active');
    await Promise.all([start, end]);
    expect(sent).toEqual([
      ['thread', 'processing'],
      ['thread', 'active'],
    ]);
    // A stream's stop set `active`: asking for it again sends nothing.
    await set('thread', 'processing');
    coalescer.assume('thread', 'active');
    await set('thread', 'active');
    expect(sent).toHaveLength(3);
  });

  it('reports a refused state and sends the next one anew', async () => {
    const { set, sent, dropped, failNextCall } = setup({ limit: 10, windowMs: 1000 });
    failNextCall();
    await set('thread', 'processing');
    expect(dropped).toEqual([['thread', 'processing', 'failed']]);
    await set('thread', 'processing');
    expect(sent).toEqual([['thread', 'processing']]);
  });
});
