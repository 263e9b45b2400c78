import { feedbackBlocks } from './feedback-blocks.js';
import type { Segment } from './reply-segment.js';
import type { SlackBlocks } from './slack-api.js';

/**
 * The message that ends a reply: once the reply is closing, the message holding its last character carries the
 * feedback buttons (and, when streamed, the stop that ends the thread's turn).
 */
export class ReplyEnding {
  /** The final pump runs: the text will not grow. */
  closing = false;
  /** The message showing the feedback buttons, once one does. */
  feedbackOn: string | undefined;

  /** Whether `segment` ends the reply of `text` (`more` characters still to be added to it). */
  ends(segment: Segment, text: string, more = 0): boolean {
    return this.closing && segment.end + more >= text.length;
  }

  /** The feedback buttons, for the message that ends the reply. */
  feedbackFor(segment: Segment, text: string, more = 0): SlackBlocks | undefined {
    return this.ends(segment, text, more) ? feedbackBlocks() : undefined;
  }

  /** `segment` was sent with what `feedbackFor` gave it. */
  shown(segment: Segment, text: string, more = 0): void {
    if (this.ends(segment, text, more)) this.feedbackOn = segment.ts;
  }
}
