import { describe, expect, it } from 'vitest';
import type { ButlerEvent, EventBus } from '../../../src/core/contracts/event-bus.js';
import type { Logger } from '../../../src/core/contracts/logger.js';
import { noopObserver, type Observer, type TurnInfo } from '../../../src/core/contracts/observer.js';
import { combineObservers } from '../../../src/core/observe/fanout.js';
import { guardObserver } from '../../../src/core/observe/guard.js';
import { createEventsObserver } from '../../../src/observability/events-observer.js';

/** An in-memory bus that keeps what was published. */
function memoryBus() {
  const published: ButlerEvent[] = [];
  const bus: EventBus = {
    publish: (event) => {
      published.push(event);
    },
    subscribe: () => () => {},
    close: async () => {},
  };
  return { bus, published };
}

const now = new Date('2026-11-22T10:00:00.000Z');
const at = now.toISOString();
const turn: TurnInfo = {
  turnId: 'turn-1',
  conversationKey: 'slack:T1:C1:1.0',
  platform: 'slack',
  userId: 'U1',
  trigger: 'message',
};
const approval = {
  approvalId: 'appr-1',
  conversationKey: turn.conversationKey,
  toolName: 'shell',
  risk: 'high',
};

describe('events observer', () => {
  it('maps a turn, its approval request and its compaction to events', () => {
    const { bus, published } = memoryBus();
    const observer = createEventsObserver(bus, () => now);
    const turnObserver = observer.startTurn(turn);
    turnObserver.generation({
      name: 'chat',
      model: 'm',
      startTime: now,
      endTime: now,
      input: [{ role: 'user', content: 'secret question' }],
      output: 'secret answer',
    });
    turnObserver.toolCall({
      toolName: 'shell',
      callId: 'call-1',
      risk: 'high',
      decision: 'auto',
      startTime: now,
      endTime: now,
      input: { command: 'cat secrets' },
      output: 'secret output',
    });
    turnObserver.agent({ agent: 'ops', delegateCallId: 'call-2', task: 'secret task', resumed: false }).end({
      status: 'done',
      steps: 1,
      usage: { promptTokens: 1, completionTokens: 1 },
      output: 'secret result',
    });
    turnObserver.compaction({
      model: 'm',
      startTime: new Date(0),
      endTime: new Date(1000),
      tokensBefore: 9000,
      tokensAfter: 1500,
      messagesFolded: 12,
    });
    turnObserver.approvalRequested(approval);
    turnObserver.end({ status: 'parked' });

    expect(published).toEqual([
      {
        type: 'turn_started',
        at,
        conversationKey: turn.conversationKey,
        turnId: 'turn-1',
        trigger: 'message',
        platform: 'slack',
        userId: 'U1',
      },
      {
        type: 'compaction',
        at: new Date(1000).toISOString(),
        conversationKey: turn.conversationKey,
        tokensBefore: 9000,
        tokensAfter: 1500,
        messagesFolded: 12,
      },
      { type: 'approval_requested', at, ...approval },
      {
        type: 'turn_finished',
        at,
        conversationKey: turn.conversationKey,
        turnId: 'turn-1',
        status: 'parked',
      },
    ]);
    expect(JSON.stringify(published)).not.toContain('secret');
  });

  it('reports a failed compaction with a bounded error, and a failed turn without its error text', () => {
    const { bus, published } = memoryBus();
    const turnObserver = createEventsObserver(bus, () => now).startTurn({ ...turn, trigger: 'resume' });
    turnObserver.compaction({
      model: 'm',
      startTime: now,
      endTime: now,
      tokensBefore: 9000,
      tokensAfter: 9000,
      messagesFolded: 0,
      error: 'e'.repeat(5000),
    });
    turnObserver.end({ status: 'failed', error: 'The model said something private.' });

    expect(published[0]).toMatchObject({ type: 'turn_started', trigger: 'resume' });
    const compaction = published[1];
    expect(compaction?.type === 'compaction' && compaction.error?.length).toBe(300);
    expect(published[2]).toEqual({
      type: 'turn_finished',
      at,
      conversationKey: turn.conversationKey,
      turnId: 'turn-1',
      status: 'failed',
    });
  });

  it('maps approvals counted toward a quorum, decisions and expiries', () => {
    const { bus, published } = memoryBus();
    const observer = createEventsObserver(bus, () => now);
    observer.approvalVoted?.({ ...approval, votes: 1, quorum: 2, votedBy: 'U3' });
    observer.approvalDecided({ ...approval, decision: 'approve_for_conversation', decidedBy: 'U2' });
    observer.approvalExpired(approval);
    expect(published).toEqual([
      { type: 'approval_voted', at, ...approval, votes: 1, quorum: 2, votedBy: 'U3' },
      { type: 'approval_decided', at, ...approval, decision: 'approve_for_conversation', decidedBy: 'U2' },
      { type: 'approval_expired', at, ...approval },
    ]);
  });
});

describe('combined observers', () => {
  const silent: Logger = {
    error: () => {},
    warn: () => {},
    info: () => {},
    debug: () => {},
    child: () => silent,
  };

  it('reports every call to each observer, even when another one throws', async () => {
    const first = memoryBus();
    const second = memoryBus();
    const broken: Observer = {
      startTurn: () => {
        throw new Error('tracer broke');
      },
      approvalDecided: () => {
        throw new Error('tracer broke');
      },
      approvalExpired: () => {},
      flush: async () => {
        throw new Error('flush broke');
      },
      shutdown: async () => {},
    };
    const observer = combineObservers(
      guardObserver(
        createEventsObserver(first.bus, () => now),
        silent,
      ),
      guardObserver(broken, silent),
      noopObserver,
      guardObserver(
        createEventsObserver(second.bus, () => now),
        silent,
      ),
    );
    const turnObserver = observer.startTurn(turn);
    turnObserver.end({ status: 'replied' });
    observer.approvalVoted?.({ ...approval, votes: 1, quorum: 2, votedBy: 'U3' });
    observer.approvalDecided({ ...approval, decision: 'approve', decidedBy: 'U2' });
    await observer.flush();
    await observer.shutdown();

    for (const { published } of [first, second]) {
      expect(published.map((event) => event.type)).toEqual([
        'turn_started',
        'turn_finished',
        'approval_voted',
        'approval_decided',
      ]);
    }
  });

  it('flushes and shuts down every observer, then reports the first failure', async () => {
    const calls: string[] = [];
    const observer = (name: string, fail: boolean): Observer => ({
      ...noopObserver,
      flush: async () => {
        calls.push(`${name}.flush`);
        if (fail) throw new Error(`${name} failed`);
      },
      shutdown: async () => {
        calls.push(`${name}.shutdown`);
      },
    });
    const combined = combineObservers(observer('a', true), observer('b', false));
    await expect(combined.flush()).rejects.toThrow('a failed');
    await combined.shutdown();
    expect(calls).toEqual(['a.flush', 'b.flush', 'a.shutdown', 'b.shutdown']);
  });

  it('is the observer itself when only one is active', () => {
    const only = createEventsObserver(memoryBus().bus);
    expect(combineObservers(noopObserver, only)).toBe(only);
    expect(combineObservers(noopObserver)).toBe(noopObserver);
  });
});
