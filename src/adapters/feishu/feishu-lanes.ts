import type { LaneSpec, RateLimit, RetryPolicy } from '../pacing/index.js';
import { isRateLimited } from './feishu-api-error.js';

/**
 * Feishu's documented limits, paced in the one pacing layer (platforms.md §13 and "Checked since"): each CardKit
 * endpoint 1000/min and 50/s per app, 10 operations/s per card; a message patch 5 QPS per message; sends and
 * replies 5 QPS per chat, shared by every bot in it. Image and file uploads and message-resource downloads are
 * 1000/min and 50/s per app too (their pages on open.feishu.cn).
 */
const perSecond = (limit: number): RateLimit => ({ limit, windowMs: 1000 });
const perAppEndpoint: readonly RateLimit[] = [perSecond(50), { limit: 1000, windowMs: 60_000 }];
export const endpointLane = (appId: string, endpoint: string): LaneSpec => ({
  key: `feishu:${appId}:${endpoint}`,
  limits: perAppEndpoint,
});
export const perKeyLane = (key: string, limit: number): LaneSpec => ({ key, limits: [perSecond(limit)] });
/** Feishu's throttling answers carry no Retry-After: they surface as before, only the pace changes. */
export const noRetries: RetryPolicy = {
  retries: 0,
  retryAfterMs: () => undefined,
  rateLimited: isRateLimited,
};
