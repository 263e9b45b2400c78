import type { ChatAdapter, OpenReplyOptions, ReplyStream, ReplyTarget } from '../contracts/adapter.js';
import type { Logger } from '../contracts/logger.js';

/**
 * The reply of one turn. Opens the platform stream lazily (a turn that only asks for approval posts
 * no empty message), separates the text of successive model steps, and remembers what was shown.
 */
export class TurnReply {
  private stream: Promise<ReplyStream> | undefined;
  private text = '';
  private stepEnded = false;

  constructor(
    private readonly adapter: ChatAdapter,
    private readonly target: ReplyTarget,
    private readonly options: OpenReplyOptions,
    private readonly logger: Logger,
  ) {}

  get shown(): string {
    return this.text;
  }

  get opened(): boolean {
    return this.stream !== undefined;
  }

  private open(): Promise<ReplyStream> {
    this.stream ??= this.adapter.openReply(this.target, this.options);
    return this.stream;
  }

  /** Streams text. Platform hiccups are the adapter's to absorb; `finish` still delivers the full text. */
  async append(delta: string): Promise<void> {
    if (delta.length === 0) return;
    const separated = this.stepEnded && this.text.length > 0 ? `\n\n${delta}` : delta;
    this.stepEnded = false;
    this.text += separated;
    try {
      await (await this.open()).append(separated);
    } catch (error) {
      this.logger.warn({ err: error }, 'streaming an update failed; the final text will still be sent');
    }
  }

  /** The platform messages the reply consists of so far. */
  async messageIds(): Promise<string[]> {
    return this.stream ? [...(await this.stream).messageIds] : [];
  }

  /** The next text belongs to a new model step (after tool calls). */
  endStep(): void {
    this.stepEnded = true;
  }

  /** Ends the reply showing `text` (all of it), or what was shown so far. Throws if it cannot be delivered. */
  async finish(text = this.text): Promise<void> {
    this.text = text;
    await (await this.open()).finish(text);
  }
}
