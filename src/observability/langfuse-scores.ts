import { createHash } from 'node:crypto';
import { LangfuseAPIClient } from '@langfuse/core';
import type { SpanContext } from '@opentelemetry/api';
import type { Logger } from '../core/contracts/logger.js';
import type { FeedbackInfo } from '../core/contracts/observer.js';

/**
 * A turn's trace id is derived from its id, the way Langfuse's `createTraceId(seed)` derives one (the first
 * 32 hex digits of the seed's SHA-256): a rating given days later scores the right trace without Butler
 * storing trace ids, and anyone holding a turn id finds its trace.
 */
export function turnTraceId(turnId: string): string {
  return createHash('sha256').update(turnId).digest('hex').slice(0, 32);
}

/**
 * The parent a turn's root span claims so that its trace id is `turnTraceId` (Langfuse's documented way to
 * set a trace id: a parent span context with that trace id; the parent span itself is never sent).
 */
export function turnTraceParent(turnId: string): SpanContext {
  const hash = createHash('sha256').update(turnId).digest('hex');
  return { traceId: hash.slice(0, 32), spanId: hash.slice(32, 48), traceFlags: 1 };
}

/** The score a rating becomes: Langfuse's usual `user-feedback`, 1 for 👍 and 0 for 👎. */
export const feedbackScoreName = 'user-feedback';

/**
 * Sends ratings as scores on their turns' traces (`POST /api/public/scores`, Basic auth with the project's
 * keys). The rating's id is the score's: a changed rating replaces the score. Failures are logged, never
 * thrown: the click was stored already. `flush` waits for the scores still on their way.
 */
export function createScoreSender(options: {
  publicKey: string;
  secretKey: string;
  baseUrl: string;
  logger: Logger;
}) {
  const client = new LangfuseAPIClient({
    environment: options.baseUrl,
    baseUrl: options.baseUrl,
    username: options.publicKey,
    password: options.secretKey,
  });
  // Per rating, one score at a time: a changed rating's score must arrive after the one it replaces.
  const pending = new Map<string, Promise<void>>();
  const create = (feedback: FeedbackInfo) =>
    client.scores
      .create(
        {
          id: feedback.id,
          traceId: turnTraceId(feedback.turnId),
          name: feedbackScoreName,
          value: feedback.rating === 'positive' ? 1 : 0,
          dataType: 'BOOLEAN',
          ...(feedback.comment ? { comment: feedback.comment } : {}),
          environment: 'production',
          metadata: { rater: feedback.rater, conversationKey: feedback.conversationKey },
        },
        { maxRetries: 1, timeoutInSeconds: 10 },
      )
      .then(
        () => undefined,
        (error: unknown) =>
          options.logger.warn(
            { err: error, turn: feedback.turnId },
            'could not send the feedback score to Langfuse',
          ),
      );
  return {
    send(feedback: FeedbackInfo): void {
      const sending = (pending.get(feedback.id) ?? Promise.resolve()).then(() => create(feedback));
      pending.set(feedback.id, sending);
      void sending.then(() => {
        if (pending.get(feedback.id) === sending) pending.delete(feedback.id);
      });
    },
    async flush(): Promise<void> {
      await Promise.all([...pending.values()]);
    },
  };
}
