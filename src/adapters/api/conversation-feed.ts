import { EventEmitter } from 'node:events';
import {
  type ConversationEvent,
  type ConversationEventRepository,
  isTurnEnd,
} from '../../core/conversation-events.js';
import type { SseStream } from './sse.js';

/**
 * The stored event log of API conversations, and clients following it. Appends wake the followers in this
 * process at once; followers also look again every `pollMs`, which is how they see events that another
 * Butler process sharing the database appended.
 */
export class ConversationFeed {
  private readonly appended = new EventEmitter().setMaxListeners(0);

  constructor(
    private readonly events: ConversationEventRepository,
    private readonly options: { pollMs: number; pageSize?: number },
  ) {}

  async append(conversationKey: string, events: readonly ConversationEvent[]): Promise<number[]> {
    const ids = await this.events.append(conversationKey, events);
    this.appended.emit(conversationKey);
    return ids;
  }

  lastId(conversationKey: string): Promise<number> {
    return this.events.lastId(conversationKey);
  }

  /**
   * Sends the conversation's events after `afterId` until one ends a turn (`done`, `error`,
   * `confirm_required`; with `messageId`, the turn that answers that message), the client leaves, or
   * nothing new comes for `idleMs`.
   */
  async follow(
    conversationKey: string,
    afterId: number,
    stream: SseStream,
    idleMs: number,
    messageId?: string,
  ): Promise<'turn_end' | 'client_left' | 'idle'> {
    const pageSize = this.options.pageSize ?? 200;
    let last = afterId;
    let quietSince = Date.now();
    while (!stream.closed) {
      const page = await this.events.listAfter(conversationKey, last, pageSize);
      for (const { id, event } of page) {
        stream.send(event, id);
        last = id;
        if (isTurnEnd(event, messageId)) return 'turn_end';
      }
      if (page.length === pageSize) continue;
      if (page.length > 0) quietSince = Date.now();
      else if (Date.now() - quietSince > idleMs) return 'idle';
      await this.appendedOrTimeout(conversationKey);
    }
    return 'client_left';
  }

  private appendedOrTimeout(conversationKey: string): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.appended.off(conversationKey, done);
        resolve();
      };
      const timer = setTimeout(done, this.options.pollMs);
      this.appended.once(conversationKey, done);
    });
  }
}
