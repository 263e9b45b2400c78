import type { Logger } from '../../core/contracts/logger.js';
import { isRateLimited } from './feishu-api-error.js';
import type { FeishuApi } from './feishu-api-types.js';
import type { JsonRecord } from './fields.js';
import { markdownCard } from './reply-cards.js';

const supersededNotice = '_(see the reply above)_';

/**
 * The messages an interrupted earlier attempt at a reply posted (crash recovery): overwritten in order before
 * anything new is posted, and the ones the reply did not need are cleared at its end.
 */
export class ResumedMessages {
  private readonly pool: string[];

  constructor(
    private readonly api: FeishuApi,
    resume: readonly string[],
    private readonly logger: Logger,
  ) {
    this.pool = [...resume];
  }

  /** Puts `card` in the next message left to overwrite: its id, or undefined when none is left (post anew). */
  async overwrite(card: JsonRecord): Promise<string | undefined> {
    while (this.pool.length > 0) {
      const messageId = this.pool.shift() as string;
      try {
        await this.api.patchMessage(messageId, card);
        this.logger.info({ messageId }, 'Feishu reply: overwriting the message of an interrupted attempt');
        return messageId;
      } catch (error) {
        if (isRateLimited(error)) {
          this.pool.unshift(messageId);
          throw error;
        }
        this.logger.warn(
          { messageId, err: error },
          'Feishu reply: cannot overwrite an interrupted attempt; posting anew',
        );
      }
    }
    return undefined;
  }

  /** Points the messages the reply did not need at the reply. */
  async release(): Promise<void> {
    for (const messageId of this.pool.splice(0)) {
      try {
        await this.api.patchMessage(messageId, markdownCard(supersededNotice));
      } catch (error) {
        this.logger.warn({ messageId, err: error }, 'Feishu reply: could not clear an interrupted attempt');
      }
    }
  }
}
