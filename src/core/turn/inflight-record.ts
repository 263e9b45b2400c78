import { keptMessages } from '../contracts/messages.js';
import type { InflightTurn, Store } from '../contracts/store.js';

/**
 * The turn's crash-recovery record (`inflight` on its conversation): the reply messages the platform
 * created, and the complete answer once there is one. The stream records a message while the turn may be
 * recording its answer; as two updates on two pooled connections, the older state could land last and
 * lose the message (a restart would then post a second reply). So writes go out one after another, and
 * one asked for when nothing changed since the last write (a change that rode along with it) is skipped.
 */
export class InflightRecord {
  private changes = 0;
  private written = 0;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: Store,
    private readonly conversationId: string,
    readonly state: InflightTurn,
  ) {}

  get delivered(): InflightTurn['delivered'] {
    return this.state.delivered;
  }

  /** A platform message of the reply exists: recorded before the reply goes on. */
  messageCreated(messageId: string): Promise<void> {
    this.state.replyMessageIds.push(messageId);
    this.changes += 1;
    return this.save();
  }

  /**
   * The complete answer; written by the next `save`, before the reply is finished. Tool results the model alone
   * may read are recorded as what is kept of them (`ToolOutput.kept`).
   */
  deliver(delivered: NonNullable<InflightTurn['delivered']>): void {
    this.state.delivered = { ...delivered, messages: keptMessages(delivered.messages) };
    this.changes += 1;
  }

  /** Writes the record if it changed since the last write; failures reach the caller, not later writes. */
  save(): Promise<void> {
    const write = this.writing.then(async () => {
      const changes = this.changes;
      if (changes === this.written) return;
      await this.store.conversations.setInflight(this.conversationId, this.state);
      this.written = changes;
    });
    this.writing = write.catch(() => {});
    return write;
  }
}
