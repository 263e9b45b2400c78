import type { Person } from './events.js';

/**
 * Storage contract of stop requests: a person asks to stop the turn running in a conversation, from any
 * process; the process running it sees the request within a poll and stops it.
 */

export interface StopRequest {
  conversationKey: string;
  requestedBy: Person;
  requestedAt: Date;
}

export interface StopRepository {
  /**
   * Records a request to stop the turn running in the conversation. False, and nothing recorded, when no
   * process is working on it (no live lease): there is nothing to stop.
   */
  request(conversationKey: string, by: Person): Promise<boolean>;
  /** The requests for these conversations (the poll of a process running turns there). */
  pending(conversationKeys: readonly string[]): Promise<StopRequest[]>;
  /** Forgets a conversation's request made at or before `upTo` (it was acted on, or came before the turn). */
  clear(conversationKey: string, upTo: Date): Promise<void>;
}
