/** Pacing of platform API calls: one budget per workspace (or app) and method, shared by every conversation. */
export { type LaneSpec, Pacer, type RetryPolicy, type Share } from './pacer.js';
export type { RateLimit } from './rate-window.js';
