/** Pacing of platform API calls: one budget per workspace (or app) and method, shared by every conversation. */
export {
  type CallObserver,
  type CallOutcome,
  type LaneSpec,
  Pacer,
  type PacerOptions,
  type RetryPolicy,
  type Share,
} from './pacer.js';
export type { RateLimit } from './rate-window.js';
