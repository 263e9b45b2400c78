import type { FeedbackRating } from '../../core/contracts/feedback-records.js';
import type { Logger } from '../../core/contracts/logger.js';
import { buttonRow, plainText } from './approval-buttons.js';
import type { FeishuApi } from './feishu-api-types.js';
import { asRecord, type JsonRecord } from './fields.js';
import { markdownCard } from './reply-cards.js';

/**
 * 👍 / 👎 under a finished reply card (card JSON 2.0 buttons whose callback value names the rating), and
 * reading that value back from a card action.
 */

export interface FeedbackButtonValue {
  feedback: FeedbackRating;
}

function feedbackButton(rating: FeedbackRating, emoji: string): JsonRecord {
  return {
    tag: 'button',
    element_id: `feedback_${rating}`,
    type: 'default',
    text: plainText(emoji),
    behaviors: [{ type: 'callback', value: { feedback: rating } satisfies FeedbackButtonValue }],
  };
}

/** The row of feedback buttons, as card elements. */
export function feedbackElements(): JsonRecord[] {
  return [buttonRow([feedbackButton('positive', '👍'), feedbackButton('negative', '👎')])];
}

/** The rating a feedback button's value names; undefined for any other value. */
export function parseFeedbackValue(value: unknown): FeedbackButtonValue | undefined {
  const record = asRecord(value);
  const rating = record?.feedback;
  if (Object.keys(record ?? {}).length !== 1) return undefined;
  return rating === 'positive' || rating === 'negative' ? { feedback: rating } : undefined;
}

/**
 * Puts the buttons under the reply's last card: appended to a CardKit card (`sequence` is its next one), or
 * in the whole card a patched message is replaced with. A failure only loses the buttons.
 */
export async function addFeedbackButtons(
  api: FeishuApi,
  card: { messageId: string; cardId: string | undefined; sequence: number; content: string },
  logger: Logger,
): Promise<void> {
  try {
    if (card.cardId) await api.appendCardElements(card.cardId, feedbackElements(), card.sequence);
    else await api.patchMessage(card.messageId, markdownCard(card.content, feedbackElements()));
  } catch (error) {
    logger.warn(
      { messageId: card.messageId, err: error },
      'Feishu reply: could not add the feedback buttons',
    );
  }
}
