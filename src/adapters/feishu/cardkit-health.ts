import { FeishuApiError } from './feishu-api-error.js';

/**
 * Whether CardKit is worth trying for a new reply. Shared by all replies, but no one reply decides it: a
 * reply whose own payload CardKit refuses falls back for itself, and only failures that point at the
 * platform, seen by several replies, make new replies skip CardKit for a while.
 */
export interface CardkitHealth {
  usable(now: number): boolean;
  /** A CardKit call of the reply `replyId` failed in a way that points at the platform (see `pointsAtPlatform`). */
  failed(now: number, replyId: string): void;
}

export interface CardkitHealthOptions {
  /** How long new replies skip CardKit once it looks down. */
  cooldownMilliseconds?: number;
  /** Distinct replies whose CardKit calls must fail, within `windowMilliseconds`, before it looks down. */
  failingReplies?: number;
  windowMilliseconds?: number;
}

export function createCardkitHealth(options: CardkitHealthOptions = {}): CardkitHealth {
  const cooldown = options.cooldownMilliseconds ?? 5 * 60_000;
  const failingReplies = options.failingReplies ?? 2;
  const window = options.windowMilliseconds ?? 60_000;
  const recent = new Map<string, number>();
  let retryAt = 0;
  return {
    usable: (now) => now >= retryAt,
    failed: (now, replyId) => {
      for (const [id, at] of recent) if (now - at > window) recent.delete(id);
      recent.set(replyId, now);
      if (recent.size < failingReplies) return;
      retryAt = now + cooldown;
      recent.clear();
    },
  };
}

/**
 * Whether a failed call says something about the platform (no answer, a server error, the app lacks the
 * CardKit scope) rather than about the request: a refused payload (HTTP 4xx or a Feishu code, such as
 * 230099 for an oversized card or one with too many tables) concerns only the reply that sent it, and a
 * rate limit only asks for a slower pace.
 */
export function pointsAtPlatform(error: unknown): boolean {
  if (!(error instanceof FeishuApiError)) return true;
  if (error.rateLimited) return false;
  if (error.scopeMissing) return true;
  if (error.httpStatus !== undefined) return error.httpStatus >= 500;
  return error.feishuCode === undefined;
}
