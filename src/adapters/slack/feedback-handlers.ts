import type { ButlerIntake } from '../../core/contracts/adapter.js';
import type { ChatUser } from '../../core/contracts/events.js';
import type { FeedbackRating, FeedbackResult } from '../../core/contracts/feedback-records.js';
import type { Logger } from '../../core/contracts/logger.js';
import {
  parseFeedbackClick,
  parseFeedbackComment,
  type RatedMessage,
  renderFeedbackCommentView,
} from './feedback-blocks.js';
import { escapeMrkdwn } from './mrkdwn.js';
import { errorFields, type SlackApi } from './slack-api.js';

export interface FeedbackHandlerDependencies {
  intake: ButlerIntake;
  api: SlackApi;
  logger: Logger;
  /** A rating still being stored by then is acknowledged anyway (Slack shows an error after 3 s). */
  acknowledgeWithinMs: number;
}

type Ack = () => Promise<void>;

const couldNotRecord = 'Butler could not record your feedback. Please try again in a moment.';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

/**
 * Clicks on a reply's feedback buttons and the comment modal a 👎 opens. Each rating is stored before the
 * acknowledgement when the database allows (within the deadline), then the clicker alone is told (an
 * ephemeral message): nobody else in the channel sees who rated what.
 */
export function createFeedbackHandlers(dependencies: FeedbackHandlerDependencies) {
  const { intake, api, logger } = dependencies;

  async function record(
    message: RatedMessage,
    user: ChatUser,
    rating: FeedbackRating,
    comment?: string,
  ): Promise<FeedbackResult | undefined> {
    const fields = {
      platform: 'slack',
      channel: message.channel,
      messageTs: message.messageTs,
      user: user.id,
    };
    try {
      const result = await intake.recordFeedback({
        platform: 'slack',
        user,
        reply: { channel: message.channel, messageId: message.messageTs },
        rating,
        comment,
      });
      if (!result.ok) logger.info({ ...fields, code: result.code }, 'feedback refused');
      return result;
    } catch (error) {
      logger.error({ ...fields, ...errorFields(error) }, 'feedback could not be recorded');
      return undefined;
    }
  }

  async function tell(message: RatedMessage, user: ChatUser, text: string): Promise<void> {
    await api
      .postEphemeral({
        channel: message.channel,
        user: user.id,
        text: escapeMrkdwn(text),
        ...(message.threadTs ? { threadTs: message.threadTs } : {}),
      })
      .catch((error: unknown) =>
        logger.warn({ platform: 'slack', ...errorFields(error) }, 'feedback ephemeral failed'),
      );
  }

  /** Stores the rating (waiting no longer than the deadline), then acknowledges the click. */
  async function recordThenAcknowledge(
    recording: Promise<FeedbackResult | undefined>,
    ack: Ack,
  ): Promise<FeedbackResult | undefined> {
    await Promise.race([recording, sleep(dependencies.acknowledgeWithinMs)]);
    await ack();
    return recording;
  }

  async function feedbackClick(body: unknown, ack: Ack): Promise<void> {
    const click = parseFeedbackClick(body);
    if (!click) {
      await ack();
      logger.warn({ platform: 'slack' }, 'feedback click without a rating, message or user');
      return;
    }
    const result = await recordThenAcknowledge(record(click, click.user, click.rating), ack);
    // The trigger is good for 3 s after the click: the comment modal opens right after the acknowledgement.
    if (result?.ok && click.rating === 'negative' && click.triggerId) {
      await api
        .openView({ triggerId: click.triggerId, view: renderFeedbackCommentView(click) })
        .catch((error: unknown) =>
          logger.info({ platform: 'slack', ...errorFields(error) }, 'feedback comment modal unavailable'),
        );
    }
    await tell(click, click.user, result?.message ?? couldNotRecord);
  }

  async function commentSubmission(body: unknown, ack: Ack): Promise<void> {
    const submission = parseFeedbackComment(body);
    if (!submission?.comment) {
      await ack();
      if (!submission) logger.warn({ platform: 'slack' }, 'feedback comment without its message');
      return;
    }
    const recording = record(submission, submission.user, 'negative', submission.comment);
    const result = await recordThenAcknowledge(recording, ack);
    await tell(submission, submission.user, result?.message ?? couldNotRecord);
  }

  return { feedbackClick, commentSubmission };
}

export type FeedbackHandlers = ReturnType<typeof createFeedbackHandlers>;
