import type { ReplyTarget } from '../../core/contracts/adapter.js';
import type { Logger } from '../../core/contracts/logger.js';
import { destinationFor } from './destination.js';
import { FeishuApiError } from './feishu-api-error.js';
import type { FeishuApi, MessageDestination } from './feishu-api-types.js';
import { isThreadId } from './normalize.js';

/**
 * Where a message goes in a Feishu topic (`omt_…`) when it answers no message there: a scheduled run of a task
 * made in the config file or over the API, a notice. Feishu puts a message in a topic only as a reply to one of
 * the topic's messages (`reply_in_thread`); sent to the chat, it would start a new topic. So:
 * - every reply that does answer a message of a topic teaches its topic a message to answer, for a while;
 * - a topic not seen lately is asked of Feishu: its oldest message not recalled (im-v1/message/list with
 *   `container_id_type=thread`);
 * - when neither gives one, the message goes to the chat (a new topic), and a missing scope is said once;
 * - a message found this way that Feishu refuses to answer (recalled meanwhile) is forgotten, and `send` tries
 *   once more under a fresh one, or in the chat.
 */

const cacheSize = 5000;
/** A message learned from a reply is used this long: it may be recalled, and then no longer answers. */
const knownTtlMilliseconds = 10 * 60_000;
/** A failed lookup (network, a topic listing nothing) is tried again after this. */
const failureTtlMilliseconds = 5 * 60_000;
/** After Feishu says a scope is missing, ask again only this often (an admin may grant it meanwhile). */
const scopeRecheckMilliseconds = 10 * 60_000;

export const topicScopeHint =
  'Butler may not list the messages of a Feishu topic, so a scheduled run or notice for a topic it has not ' +
  'answered in since start-up starts a new topic: add the scope im:message.group_msg ("read all messages in ' +
  'group chats", beside im:message) and publish a new version.';

export class FeishuTopics {
  private readonly known = new Map<string, { messageId: string; until: number }>();
  private readonly failedUntil = new Map<string, number>();
  /** `thread message` pairs Feishu refused a reply under. */
  private readonly refused = new Set<string>();
  private scopeMissingUntil = 0;
  private hinted = false;

  constructor(
    private readonly api: Pick<FeishuApi, 'topicMessage'>,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /** Where a message for `target` goes; in a topic, under one of its messages whenever one is known. */
  async destination(target: ReplyTarget): Promise<MessageDestination> {
    const destination = destinationFor(target);
    const { thread } = target.address;
    if (!isThreadId(thread)) return destination;
    if (destination.replyTo) {
      this.learn(thread, destination.replyTo);
      return destination;
    }
    const message = await this.find(thread);
    return message ? { ...destination, replyTo: message, replyInThread: true } : destination;
  }

  /**
   * Sends what `send` sends to `target`'s destination. When that is a reply under a message found here (not the
   * target's own) and Feishu refuses it, the message is forgotten and the send goes once more, under a fresh one
   * or to the chat. A failure without Feishu's answer (the network) is not retried: it may have been sent.
   */
  async send<T>(target: ReplyTarget, send: (destination: MessageDestination) => Promise<T>): Promise<T> {
    const destination = await this.destination(target);
    const found =
      isThreadId(target.address.thread) && target.replyTo === undefined && destination.replyTo !== undefined;
    try {
      return await send(destination);
    } catch (error) {
      const refused = error instanceof FeishuApiError && error.feishuCode !== undefined && !error.rateLimited;
      if (!found || !refused) throw error;
      this.logger.warn(
        { thread: target.address.thread, message: destination.replyTo, err: error },
        'Feishu refused a reply under the message found for this topic; trying again without it',
      );
      this.forget(target.address.thread, destination.replyTo);
      return send(await this.destination(target));
    }
  }

  private learn(threadId: string, messageId: string): void {
    if (this.known.size >= cacheSize) this.known.clear();
    this.known.set(threadId, { messageId, until: this.now() + knownTtlMilliseconds });
  }

  /** Drops a message Feishu refused; the topic is listed again, without waiting for the failure interval. */
  private forget(threadId: string, messageId: string | undefined): void {
    if (this.known.get(threadId)?.messageId === messageId) this.known.delete(threadId);
    this.failedUntil.delete(threadId);
    if (this.refused.size >= cacheSize) this.refused.clear();
    this.refused.add(`${threadId} ${messageId}`);
  }

  private async find(threadId: string): Promise<string | undefined> {
    const now = this.now();
    const known = this.known.get(threadId);
    if (known && now < known.until) return known.messageId;
    if (now < this.scopeMissingUntil || now < (this.failedUntil.get(threadId) ?? 0)) return undefined;
    try {
      const listed = await this.api.topicMessage(threadId);
      // Feishu's listing may lag a recall: a message it refused once is not tried again.
      const message = listed && !this.refused.has(`${threadId} ${listed}`) ? listed : undefined;
      if (message) {
        this.learn(threadId, message);
        return message;
      }
      this.logger.info({ thread: threadId }, 'Feishu lists no message in this topic; sending to the chat');
    } catch (error) {
      if (error instanceof FeishuApiError && error.scopeMissing) {
        this.scopeMissingUntil = now + scopeRecheckMilliseconds;
        if (!this.hinted) this.logger.warn({ thread: threadId }, topicScopeHint);
        this.hinted = true;
        return undefined;
      }
      this.logger.warn({ thread: threadId, err: error }, 'Feishu topic lookup failed; sending to the chat');
    }
    if (this.failedUntil.size >= cacheSize) this.failedUntil.clear();
    this.failedUntil.set(threadId, now + failureTtlMilliseconds);
    return undefined;
  }
}
