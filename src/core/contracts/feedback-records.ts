import type { ChatUser, Person, Platform } from './events.js';
import type { Page, PageRequest } from './read-models.js';

/**
 * Storage contract of feedback on Butler's replies: one rating per person per reply (a turn's final answer),
 * which a later click changes rather than adds to.
 */

export type FeedbackRating = 'positive' | 'negative';

/** The reply a rating is about: the turn that wrote it and where it was shown. */
export interface RatedReply {
  turnId: string;
  conversationKey: string;
  /** The platform message rated; null when the rating named the turn (the HTTP API). */
  messageId: string | null;
}

export interface FeedbackRecord extends RatedReply {
  id: string;
  rater: Person;
  rating: FeedbackRating;
  comment: string | null;
  createdAt: Date;
  /** When the rating or its comment last changed. */
  updatedAt: Date;
}

export interface NewFeedback extends RatedReply {
  rater: Person;
  rating: FeedbackRating;
  /** Absent: a comment given with the same rating before is kept; a changed rating drops it. */
  comment?: string;
}

export interface FeedbackRepository {
  /**
   * The reply a platform message showed, found by its id among the final answers of the conversations in
   * `channel` on `platform` (message ids are unique there). Undefined for any other message.
   */
  findReply(where: {
    platform: Platform;
    channel: string;
    messageId: string;
  }): Promise<RatedReply | undefined>;
  /** The reply a turn ended with, when it wrote one. */
  findTurn(turnId: string): Promise<RatedReply | undefined>;
  /** Stores the rating, or changes the one this person gave the same turn; returns it as stored. */
  save(feedback: NewFeedback): Promise<FeedbackRecord>;
  /** Ratings, the most recently given or changed first. */
  list(page: PageRequest): Promise<Page<FeedbackRecord>>;
}

/** What a person's click or an API client asks to record. */
export interface FeedbackInput {
  platform: Platform;
  /** From the platform's signed payload, or the API key's name. */
  user: ChatUser;
  /**
   * The rated reply: a platform message (in `channel`), or a turn by id; `workspace` then limits it to the
   * conversations of that workspace (an API key rates its own).
   */
  reply: { channel: string; messageId: string } | { turnId: string; workspace?: string };
  rating: FeedbackRating;
  comment?: string | undefined;
}

export type FeedbackResult =
  | { ok: true; feedback: FeedbackRecord; message: string }
  | { ok: false; code: 'not_a_reply' | 'not_allowed'; message: string };
