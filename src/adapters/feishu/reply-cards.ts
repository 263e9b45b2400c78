import { markdownToPlainText, truncateText } from '../../core/text/index.js';
import { cardBodyBytes } from './card-limits.js';
import type { JsonRecord } from './fields.js';
import { tableCount } from './markdown-tables.js';
import { largestStopValue, withStopButton } from './stop-button.js';

/** Card JSON 2.0 for replies: the CardKit streaming card and the plain card the fallback patches. */

export const replyElementId = 'reply';
const summaryLimit = 120;

/** The one-line preview chat lists show for a card: plain text (the list shows no markdown), emoji whole. */
export function cardSummary(text: string): string {
  return truncateText(markdownToPlainText(text), summaryLimit) || '…';
}

function markdownElement(content: string): JsonRecord {
  return { tag: 'markdown', element_id: replyElementId, content: content || '…' };
}

/** Created through CardKit; its markdown element is then updated in place (typewriter effect). */
export function streamingCard(content: string): JsonRecord {
  return {
    schema: '2.0',
    config: {
      streaming_mode: true,
      summary: { content: '[Generating…]' },
      streaming_config: {
        print_frequency_ms: { default: 50 },
        print_step: { default: 2 },
        print_strategy: 'fast',
      },
    },
    body: { elements: [markdownElement(content)] },
  };
}

/** Settings that end a CardKit stream (removes the cursor, sets the chat-list preview). */
export function closedStreamingSettings(text: string): JsonRecord {
  return { config: { streaming_mode: false, summary: { content: cardSummary(text) } } };
}

/**
 * A whole card sent as message content and replaced with PATCH when CardKit is unavailable; `extra` elements
 * go below the text (the feedback buttons of a finished reply).
 */
export function markdownCard(content: string, extra: JsonRecord[] = []): JsonRecord {
  return {
    schema: '2.0',
    config: { update_multi: true, summary: { content: cardSummary(content) } },
    body: { elements: [markdownElement(content), ...extra] },
  };
}

/** The largest request body of a card showing `content`, whichever way the reply shows it, Stop button included. */
export function replyCardBodyBytes(content: string): number {
  const cards = [streamingCard(content), markdownCard(content)];
  return Math.max(...cards.map((card) => cardBodyBytes(withStopButton(card, largestStopValue))));
}

/**
 * Whether a reply card can show `content`: its largest request body (escapes included, not the markdown) and
 * its tables within the given limits.
 */
export function replyCardFits(
  content: string,
  limits: { maxCardBodyBytes: number; maxTablesPerCard: number },
): boolean {
  return (
    replyCardBodyBytes(content) <= limits.maxCardBodyBytes && tableCount(content) <= limits.maxTablesPerCard
  );
}
