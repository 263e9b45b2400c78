import type { ChatUser, Platform } from './events.js';
import type { InputRequest, InputResponse } from './input-needed.js';
import type { ResumeState } from './repositories.js';

/**
 * What a server asked the person who asked for a call, mid-call (MCP elicitation). Either a turn parked until it
 * is answered (2026-07-28): everything the retry needs is here, the call (in `resume.assistant`), the server's
 * requests and its opaque `requestState`, exactly as they came. Or a live question (a 2025 session's
 * `elicitation/create`): the call is still open in the process that made it, which renews `liveUntil` while it
 * waits; the answer goes back over that session, and nothing goes on from the row itself.
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
  /** What the parked turn goes on from; null for a live question (its turn is still running). */
  resume: ResumeState | null;
  /** A live question: until when its process vouches for the call; past it unanswered, the question lapsed. */
  liveUntil: Date | null;
  /** Answers known at once (a form asking for a secret is declined without asking anyone). */
  answers: Record<string, InputResponse>;
  expiresAt: Date;
}

export interface InputWaitRecord extends NewInputWait {
  id: string;
  /** waiting → answered (every request has an answer) | expired | lapsed (a live question's call ended first) */
  status: 'waiting' | 'answered' | 'expired' | 'lapsed';
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
  /** Parked waits still open whose form was never shown (a crash came between storing one and posting it). */
  unshown(olderThan: Date): Promise<InputWaitRecord[]>;
  /** Ends the waits whose time is up; each ends once. */
  expireDue(now: Date): Promise<InputWaitRecord[]>;
  /**
   * The process holding a live question's call still waits for it: it vouches for it until `until`. A lease that
   * ran out is not renewed (the question is as good as lapsed).
   */
  renewLive(id: string, until: Date): Promise<void>;
  /**
   * Ends live questions still open whose call ended unanswered: `id`'s (its process saw the call end), or, without
   * `id`, those of these platforms nobody vouched for since before `now` (their process is gone). Each ends once.
   */
  lapse(now: Date, scope: { id: string } | { platforms: readonly Platform[] }): Promise<InputWaitRecord[]>;
}

/** A turn parked on a question (not a live one): it goes on from `resume` once the question is closed. */
export type ParkedInputWait = InputWaitRecord & { resume: ResumeState };

export const isParked = (wait: InputWaitRecord): wait is ParkedInputWait => wait.resume !== null;
