import { describe, expect, it } from 'vitest';
import type { Logger } from '../../../src/core/contracts/logger.js';
import {
  type AgentInfo,
  type GenerationRecord,
  noopAgentObserver,
  noopObserver,
  noopTurnObserver,
  type Observer,
} from '../../../src/core/contracts/observer.js';
import { guardObserver } from '../../../src/core/observe/guard.js';

/** A logger that keeps each warning's fields, for asserting what the guard reported. */
function recordingLogger() {
  const warnings: Array<Record<string, unknown>> = [];
  const ignore = () => {};
  const logger: Logger = {
    error: ignore,
    info: ignore,
    debug: ignore,
    warn: (fields: Record<string, unknown> | string) => {
      warnings.push(typeof fields === 'string' ? { msg: fields } : fields);
    },
    child: () => logger,
  };
  return { logger, warnings };
}

const task: AgentInfo = {
  agent: 'ops',
  delegateCallId: 'call_delegate',
  task: 'Check the deploy.',
  resumed: false,
};
const generation: GenerationRecord = {
  name: 'chat',
  model: 'ops-model',
  startTime: new Date(0),
  endTime: new Date(1),
  input: [],
  output: 'ok',
};
const tracerDown = new Error('tracer down');
const turnInfo = {
  turnId: 'turn-1',
  conversationKey: 'console:local:general:main',
  platform: 'console',
  userId: 'U1',
  trigger: 'message',
} as const;

const observerWith = (turn: Partial<typeof noopTurnObserver>): Observer => ({
  ...noopObserver,
  startTurn: () => ({ ...noopTurnObserver, ...turn }),
});

describe('guardObserver', () => {
  it('swallows and logs a throwing agent(), handing back a usable no-op agent observer', () => {
    const { logger, warnings } = recordingLogger();
    const guarded = guardObserver(
      observerWith({
        agent: () => {
          throw tracerDown;
        },
      }),
      logger,
    );
    const turn = guarded.startTurn(turnInfo);

    const agent = turn.agent(task);
    expect(() => {
      agent.generation(generation);
      agent.end({ status: 'done', steps: 1, usage: { promptTokens: 1, completionTokens: 1 } });
    }).not.toThrow();
    expect(warnings).toEqual([{ err: tracerDown, observer: 'agent' }]);
  });

  it("swallows and logs a throwing generation() on an agent's observer", () => {
    const { logger, warnings } = recordingLogger();
    const ended: string[] = [];
    const guarded = guardObserver(
      observerWith({
        agent: () => ({
          ...noopAgentObserver,
          generation: () => {
            throw tracerDown;
          },
          end: (outcome) => ended.push(outcome.status),
        }),
      }),
      logger,
    );
    const agent = guarded.startTurn(turnInfo).agent(task);

    expect(() => agent.generation(generation)).not.toThrow();
    agent.end({ status: 'done', steps: 1, usage: { promptTokens: 1, completionTokens: 1 } });
    expect(warnings).toEqual([{ err: tracerDown, observer: 'generation' }]);
    expect(ended).toEqual(['done']);
  });

  it('swallows and logs a throwing startTurn(), handing back a usable no-op turn observer', () => {
    const { logger, warnings } = recordingLogger();
    const guarded = guardObserver(
      {
        ...noopObserver,
        startTurn: () => {
          throw tracerDown;
        },
      },
      logger,
    );

    const turn = guarded.startTurn(turnInfo);
    expect(() =>
      turn.agent(task).toolCall({
        toolName: 'deploys',
        callId: 'call_deploys',
        risk: 'read',
        decision: 'auto',
        startTime: new Date(0),
        endTime: new Date(1),
        input: {},
      }),
    ).not.toThrow();
    expect(warnings).toEqual([{ err: tracerDown, observer: 'startTurn' }]);
  });
});
