/** Pacing of platform API calls: one budget per workspace (or app) and method, shared by every conversation. */
export { type CoalescedCall, type CoalescedState, Coalescer, type CoalescerOptions } from './coalescer.js';
export { type Priority, WaitAbandoned } from './lane.js';
export {
  type CallObserver,
  type CallOutcome,
  type LaneSpec,
  Pacer,
  type PacerOptions,
  type Reservation,
  type RetryPolicy,
  type RunOptions,
  type Share,
} from './pacer.js';
export type { RateLimit } from './rate-window.js';
