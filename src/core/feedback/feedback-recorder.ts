import { decodeConversationKey } from '../contracts/conversation-key.js';
import { onPlatform } from '../contracts/events.js';
import type { Logger } from '../contracts/logger.js';
import type { Observer } from '../contracts/observer.js';
import type { FeedbackInput, FeedbackResult, RatedReply, Store } from '../contracts/store.js';
import { cleanJson, graphemePrefix } from '../text/index.js';

/** Longest comment kept (Slack's modal input allows 3,000; what is past this is cut). */
export const maxFeedbackCommentChars = 2000;

const notAReply = {
  ok: false,
  code: 'not_a_reply',
  message: 'That is not a Butler reply that can be rated.',
} as const;

/**
 * Ratings of Butler's replies, from any channel: the rated reply is found from the platform message clicked
 * (or the turn an API client names), the rating stored once per person and reply (a second click changes
 * it), then handed to the observer (a Langfuse score), whose failure never fails the click.
 */
export class FeedbackRecorder {
  constructor(
    private readonly store: Store,
    private readonly observer: Observer,
    private readonly logger: Logger,
  ) {}

  async record(received: FeedbackInput): Promise<FeedbackResult> {
    const input = cleanJson(received);
    const reply = await this.find(input);
    if (!reply) return notAReply;
    // People rate replies in their own channel: a click on Slack rates a Slack reply, an API key its own.
    if (decodeConversationKey(reply.conversationKey).platform !== input.platform) return notAReply;
    const comment = input.comment?.trim();
    const feedback = await this.store.feedback.save({
      ...reply,
      rater: onPlatform(input.user, input.platform),
      rating: input.rating,
      ...(comment ? { comment: graphemePrefix(comment, maxFeedbackCommentChars) } : {}),
    });
    this.observer.feedbackGiven?.({
      id: feedback.id,
      turnId: feedback.turnId,
      conversationKey: feedback.conversationKey,
      rating: feedback.rating,
      comment: feedback.comment,
      rater: `${feedback.rater.platform}:${feedback.rater.id}`,
    });
    this.logger.info(
      {
        conversation: feedback.conversationKey,
        turn: feedback.turnId,
        platform: input.platform,
        user: input.user.id,
        rating: feedback.rating,
        comment: feedback.comment !== null,
      },
      'feedback recorded',
    );
    return { ok: true, feedback, message: acknowledgement(feedback.rating, Boolean(comment)) };
  }

  private async find(input: FeedbackInput): Promise<RatedReply | undefined> {
    const { reply } = input;
    if ('messageId' in reply) return this.store.feedback.findReply({ platform: input.platform, ...reply });
    const found = await this.store.feedback.findTurn(reply.turnId);
    if (!found || reply.workspace === undefined) return found;
    return decodeConversationKey(found.conversationKey).workspace === reply.workspace ? found : undefined;
  }
}

function acknowledgement(rating: 'positive' | 'negative', commented: boolean): string {
  if (commented) return 'Thanks, your comment on this answer is saved.';
  return rating === 'positive'
    ? 'Thanks! Noted that this answer helped.'
    : 'Thanks. Noted that this answer missed the mark.';
}
