import type { ChatUser, Platform } from './events.js';
import type { InputRequest, InputResponse } from './input-needed.js';
import type { ResumeState } from './repositories.js';

/**
 * A turn parked until the person who asked answers what a server asked mid-call (MCP elicitation, 2026-07-28).
 * Everything the retry needs is here: the call (in `resume.assistant`), the server's requests and its opaque
 * `requestState`, exactly as they came.
 */
export interface NewInputWait {
  conversationKey: string;
  platform: Platform;
  server: string;
  toolName: string;
  toolCallId: string;
  requests: InputRequest[];
  requestState: string | null;
  /** Who answers: the person the turn answered last. */
  requestedBy: ChatUser;
  requesters: ChatUser[];
  resume: ResumeState;
  /** Answers known at once (a form asking for a secret is declined without asking anyone). */
  answers: Record<string, InputResponse>;
  expiresAt: Date;
}

export interface InputWaitRecord extends NewInputWait {
  id: string;
  /** waiting → answered (every request has an answer) | expired */
  status: 'waiting' | 'answered' | 'expired';
  answeredBy: ChatUser | null;
  /** Where the form was shown, when it was (a platform message). */
  formMessageId: string | null;
  createdAt: Date;
}

export type InputAnswerOutcome =
  | { status: 'answered' | 'partly'; wait: InputWaitRecord }
  | { status: 'refused'; reason: 'missing' | 'closed' | 'answered_already' };

export interface InputWaitRepository {
  /** Stores a wait; one whose every request is answered already is stored answered. */
  create(wait: NewInputWait): Promise<InputWaitRecord>;
  get(id: string): Promise<InputWaitRecord | undefined>;
  setFormMessage(id: string, messageId: string): Promise<void>;
  /**
   * Records the answer to one request of a waiting wait, once: a second answer to it, or any answer after the
   * wait ended, changes nothing. `answered` when that was the last request without one.
   */
  answer(
    id: string,
    key: string,
    response: InputResponse,
    by: ChatUser,
    now: Date,
  ): Promise<InputAnswerOutcome>;
  /**
   * Takes the waits of these platforms still open since before `before` whose requester was not reminded yet,
   * marking them reminded: each is reminded once, by one process.
   */
  claimReminders(before: Date, platforms: readonly Platform[]): Promise<InputWaitRecord[]>;
  /** Waits still open whose form was never shown (a crash came between storing one and posting it). */
  unshown(olderThan: Date): Promise<InputWaitRecord[]>;
  /** Ends the waits whose time is up; each ends once. */
  expireDue(now: Date): Promise<InputWaitRecord[]>;
}
