import type { StreamLimits } from '../../config/api-streams.js';
import { ApiError } from './http-json.js';

/**
 * How many server-sent event streams may be open at once, per API key and in all: each one holds a socket
 * and a place in a conversation's follower list. Past either cap a new stream is refused with 429 before
 * anything is done (a message is not taken), and the client tries again after Retry-After.
 */

/** Streams end at a turn's end or after `idleSeconds`: a few seconds usually frees a place. */
const retryAfterSeconds = 5;

export class StreamSlots {
  private readonly byKey = new Map<string, number>();
  private open = 0;

  constructor(private readonly limits: Pick<StreamLimits, 'perKey' | 'total'>) {}

  /** Takes a place for one stream of `keyName`, or throws a 429; the returned function gives it back. */
  take(keyName: string): () => void {
    const ofKey = this.byKey.get(keyName) ?? 0;
    if (ofKey >= this.limits.perKey)
      throw tooMany(`The key ${keyName} already has ${ofKey} open streams, the most it may have.`);
    if (this.open >= this.limits.total)
      throw tooMany(`Butler already serves ${this.open} open streams, the most it serves at once.`);
    this.byKey.set(keyName, ofKey + 1);
    this.open += 1;
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.open -= 1;
      const left = (this.byKey.get(keyName) ?? 1) - 1;
      if (left === 0) this.byKey.delete(keyName);
      else this.byKey.set(keyName, left);
    };
  }
}

function tooMany(message: string): ApiError {
  return new ApiError(
    429,
    'too_many_streams',
    `${message} Close one, or retry after ${retryAfterSeconds} s.`,
    {
      'retry-after': String(retryAfterSeconds),
    },
  );
}
