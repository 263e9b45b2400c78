import type { Logger } from '../../core/contracts/logger.js';
import {
  type CoalescedState,
  Coalescer,
  type LaneSpec,
  type Pacer,
  type RetryPolicy,
} from '../pacing/index.js';
import { type SlackApiError, toSlackApiError } from './slack-api-error.js';

/**
 * Slack calls that only show state (an agent session's status, the assistant's status line, the working
 * reaction): coalesced per thread or message and never waited on (pacing/coalescer.ts), at the lowest
 * priority of their method's budget. A state that waited a minute is dropped: by then it describes a moment
 * that has passed.
 */
export interface CosmeticBoard<S> {
  /** Wants `state` shown for `key`, sent as `method` with `args`; settles once sent, replaced or dropped. */
  set(key: string, state: S, method: string, args: Record<string, unknown>): Promise<void>;
  /** Slack shows `state` for `key` through another call. */
  assume(key: string, state: S): void;
  /** Nothing more is sent for `key`. */
  cancel(key: string): void;
  state(key: string): CoalescedState<S>;
}

export interface CosmeticOptions<S> {
  /** Whether `next` changes nothing given what Slack shows (coalescer.ts); by default, the same state again. */
  unneeded?(shown: S | undefined, next: S): boolean;
  /** What to do when Slack refuses a state (not this app, not this workspace): the caller's to decide. */
  onRefused?(error: SlackApiError): void;
}

export interface CosmeticDependencies {
  pacer: Pacer;
  policy: RetryPolicy;
  laneOf(method: string, args: Record<string, unknown>): LaneSpec;
  send(method: string, args: Record<string, unknown>): Promise<unknown>;
  logger: Logger;
}

const maxWaitMs = 60_000;

export function cosmeticBoard<S>(
  dependencies: CosmeticDependencies,
  options: CosmeticOptions<S>,
): CosmeticBoard<S> {
  const { pacer, policy, laneOf, send, logger } = dependencies;
  // Cosmetic calls are not retried after a 429: the lane still backs off, and the next state goes later.
  const cosmeticPolicy: RetryPolicy = { ...policy, retries: 0 };
  const coalescer = new Coalescer<S>({
    pacer,
    policy: cosmeticPolicy,
    unneeded: options.unneeded ?? ((shown, next) => shown === next),
    maxWaitMs,
    onDropped: (_key, _state, reason, error) => {
      const refusal = error === undefined ? undefined : toSlackApiError('cosmetic', error);
      if (refusal && !(refusal.slackError === 'ratelimited')) options.onRefused?.(refusal);
      logger.debug(
        { platform: 'slack', reason, ...(refusal ? { slackError: refusal.slackError } : {}) },
        'status not shown',
      );
    },
  });
  return {
    set: (key, state, method, args) =>
      coalescer.set(key, state, {
        method,
        lanes: [laneOf(method, args)],
        send: async () => {
          try {
            await send(method, args);
          } catch (error) {
            throw toSlackApiError(method, error);
          }
        },
      }),
    assume: (key, state) => coalescer.assume(key, state),
    cancel: (key) => coalescer.cancel(key),
    state: (key) => coalescer.state(key),
  };
}
