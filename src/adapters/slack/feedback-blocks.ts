import type { ChatUser } from '../../core/contracts/events.js';
import type { FeedbackRating } from '../../core/contracts/feedback-records.js';
import { maxFeedbackCommentChars } from '../../core/feedback/index.js';
import { blockLimits, plain, type SlackBlock, section } from './block-kit.js';
import { clickerOf, isRecord } from './parse.js';

/**
 * Feedback on a finished reply: Slack's `context_actions` block with a `feedback_buttons` element under the
 * reply (docs.slack.dev "Context actions block", "Feedback buttons element"), the comment modal a 👎 opens,
 * and what their payloads mean. Pure functions.
 */

export const feedbackActionId = 'butler_feedback';
export const feedbackCommentCallbackId = 'butler_feedback_comment';
const commentBlockId = 'comment';
const commentInputId = 'comment_input';

/** The buttons under a finished reply; each button's value names its rating. */
export function feedbackBlocks(): SlackBlock[] {
  return [
    {
      type: 'context_actions',
      elements: [
        {
          type: 'feedback_buttons',
          action_id: feedbackActionId,
          positive_button: {
            text: plain('👍', blockLimits.buttonText),
            value: 'positive' satisfies FeedbackRating,
            accessibility_label: 'This answer helped',
          },
          negative_button: {
            text: plain('👎', blockLimits.buttonText),
            value: 'negative' satisfies FeedbackRating,
            accessibility_label: 'This answer missed the mark',
          },
        },
      ],
    },
  ];
}

/** The reply a click or a comment is about: Slack's message, in its channel and thread. */
export interface RatedMessage {
  channel: string;
  messageTs: string;
  threadTs?: string | undefined;
}

export interface FeedbackClick extends RatedMessage {
  user: ChatUser;
  rating: FeedbackRating;
  triggerId: string | undefined;
}

export interface FeedbackComment extends RatedMessage {
  user: ChatUser;
  comment: string | undefined;
}

function field(record: unknown, key: string): string | undefined {
  if (!isRecord(record)) return undefined;
  const value = record[key];
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

const isRating = (value: unknown): value is FeedbackRating => value === 'positive' || value === 'negative';

/** A click on the feedback buttons (`block_actions`, an action of type `feedback_buttons`). */
export function parseFeedbackClick(body: unknown): FeedbackClick | undefined {
  if (!isRecord(body) || body.type !== 'block_actions' || !Array.isArray(body.actions)) return undefined;
  const action = body.actions.find(
    (candidate) =>
      isRecord(candidate) &&
      candidate.type === 'feedback_buttons' &&
      candidate.action_id === feedbackActionId,
  );
  const rating = field(action, 'value');
  const user = clickerOf(body);
  const channel = field(body.container, 'channel_id') ?? field(body.channel, 'id');
  const messageTs = field(body.container, 'message_ts') ?? field(body.message, 'ts');
  if (!isRating(rating) || !user || !channel || !messageTs) return undefined;
  const threadTs = field(body.container, 'thread_ts') ?? field(body.message, 'thread_ts');
  return { user, rating, channel, messageTs, threadTs, triggerId: field(body, 'trigger_id') };
}

/** The modal a 👎 opens: an optional comment on what was wrong. */
export function renderFeedbackCommentView(message: RatedMessage): Record<string, unknown> {
  return {
    type: 'modal',
    callback_id: feedbackCommentCallbackId,
    private_metadata: JSON.stringify(message),
    title: plain('What went wrong?', blockLimits.modalTitle),
    submit: plain('Send', blockLimits.modalTitle),
    close: plain('Skip', blockLimits.modalTitle),
    blocks: [
      section('Your 👎 is saved. A few words on what was wrong help make Butler better.'),
      {
        type: 'input',
        block_id: commentBlockId,
        optional: true,
        label: plain('Comment (optional)', 2000),
        element: {
          type: 'plain_text_input',
          action_id: commentInputId,
          multiline: true,
          max_length: maxFeedbackCommentChars,
        },
      },
    ],
  };
}

/** The comment modal submitted (`view_submission`), with the message named in its private metadata. */
export function parseFeedbackComment(body: unknown): FeedbackComment | undefined {
  if (!isRecord(body) || body.type !== 'view_submission' || !isRecord(body.view)) return undefined;
  let metadata: unknown;
  try {
    metadata = JSON.parse(field(body.view, 'private_metadata') ?? '');
  } catch {
    return undefined;
  }
  const channel = field(metadata, 'channel');
  const messageTs = field(metadata, 'messageTs');
  const user = clickerOf(body);
  if (!channel || !messageTs || !user) return undefined;
  const values = isRecord(body.view.state) ? body.view.state.values : undefined;
  const block = isRecord(values) ? values[commentBlockId] : undefined;
  const comment = field(isRecord(block) ? block[commentInputId] : undefined, 'value')?.trim();
  return { user, channel, messageTs, threadTs: field(metadata, 'threadTs'), comment: comment || undefined };
}
