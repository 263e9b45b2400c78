import type {
  ChatAdapter,
  OpenReplyOptions,
  ReplyStream,
  ReplyTarget,
} from '../../src/core/contracts/adapter.js';
import type { ApprovalCard } from '../../src/core/contracts/approval-card.js';
import type { ChatUser, ConversationAddress, Platform } from '../../src/core/contracts/events.js';
import {
  type FileBytes,
  FileTooLargeError,
  type InboundFile,
  type OutboundFile,
} from '../../src/core/contracts/files.js';

/**
 * A platform at the core's port: records what Butler shows, the way a fake Slack API records calls.
 * Used by core tests; the Slack and Feishu suites drive the real adapters against fake platform APIs.
 */

export interface RecordedReply {
  target: ReplyTarget;
  resume: readonly string[];
  messageIds: string[];
  deltas: string[];
  finalText: string | undefined;
  openedAt: number;
  finishedAt: number | undefined;
}

/** What the adapter was asked to do, as it happens (a child process prints these for its parent). */
export type AdapterEvent =
  | { type: 'created'; messageId: string; resume: readonly string[] }
  | { type: 'append'; messageId: string; delta: string }
  | { type: 'finish'; messageId: string; text: string }
  | { type: 'notice'; text: string }
  | { type: 'card'; messageId: string; approvalIds: string[] };

export interface RecordedCard {
  messageId: string;
  target: ReplyTarget;
  card: ApprovalCard;
  updates: ApprovalCard[];
}

export class RecordingAdapter implements ChatAdapter {
  readonly replies: RecordedReply[] = [];
  readonly notices: Array<{ target: ReplyTarget; text: string }> = [];
  readonly cards: RecordedCard[] = [];
  readonly working: ReplyTarget[] = [];
  cleared = 0;
  /** Makes the next postApprovalCard calls throw (platform outage). */
  failCards = 0;
  /** Files people shared, by locator, as the platform's file host serves them. */
  readonly hostedFiles = new Map<string, FileBytes>();
  /** How often each locator was downloaded. */
  readonly downloads = new Map<string, number>();
  /** Makes downloads wait for this promise (a slow file host). */
  holdDownloads: Promise<void> | undefined;
  readonly sentFiles: Array<{ target: ReplyTarget; file: OutboundFile }> = [];
  private sequence = 0;

  constructor(
    readonly platform: Platform = 'console',
    private readonly onEvent: (event: AdapterEvent) => void = () => {},
  ) {}

  async openReply(target: ReplyTarget, options: OpenReplyOptions = {}): Promise<ReplyStream> {
    const reply: RecordedReply = {
      target,
      resume: [...(options.resume ?? [])],
      messageIds: [],
      deltas: [],
      finalText: undefined,
      openedAt: Date.now(),
      finishedAt: undefined,
    };
    this.replies.push(reply);
    // Like a real adapter: an interrupted attempt's message is overwritten, not posted again.
    const ensureMessage = async () => {
      const existing = reply.messageIds[0];
      if (existing) return existing;
      const resumed = reply.resume[0];
      const id = resumed ?? `${process.pid}-m${++this.sequence}`;
      reply.messageIds.push(id);
      if (!resumed) {
        this.onEvent({ type: 'created', messageId: id, resume: reply.resume });
        await options.onMessageCreated?.(id);
      }
      return id;
    };
    return {
      get messageIds() {
        return reply.messageIds;
      },
      append: async (delta) => {
        const messageId = await ensureMessage();
        reply.deltas.push(delta);
        this.onEvent({ type: 'append', messageId, delta });
      },
      finish: async (text) => {
        const messageId = await ensureMessage();
        reply.finalText = text;
        reply.finishedAt = Date.now();
        this.onEvent({ type: 'finish', messageId, text });
      },
    };
  }

  async postNotice(target: ReplyTarget, text: string): Promise<void> {
    this.notices.push({ target, text });
    this.onEvent({ type: 'notice', text });
  }

  async postApprovalCard(target: ReplyTarget, card: ApprovalCard): Promise<string> {
    if (this.failCards > 0) {
      this.failCards -= 1;
      throw new Error('platform unavailable');
    }
    const messageId = `card${++this.sequence}`;
    this.cards.push({ messageId, target, card, updates: [] });
    this.onEvent({ type: 'card', messageId, approvalIds: card.calls.map((call) => call.approvalId) });
    return messageId;
  }

  async updateApprovalCard(
    _address: ConversationAddress,
    messageId: string,
    card: ApprovalCard,
  ): Promise<void> {
    this.cards.find((entry) => entry.messageId === messageId)?.updates.push(card);
  }

  async showWorking(target: ReplyTarget): Promise<() => Promise<void>> {
    this.working.push(target);
    return async () => {
      this.cleared += 1;
    };
  }

  async fetchFile(file: InboundFile, options: { maxBytes: number }): Promise<FileBytes> {
    this.downloads.set(file.locator, (this.downloads.get(file.locator) ?? 0) + 1);
    await this.holdDownloads;
    const hosted = this.hostedFiles.get(file.locator);
    if (!hosted) throw new Error(`file_not_found: ${file.locator}`);
    if (hosted.bytes.byteLength > options.maxBytes) throw new FileTooLargeError(options.maxBytes);
    return hosted;
  }

  /** Direct chats opened ("remind me" tasks), with the note posted in each. */
  readonly directChats: Array<{ user: ChatUser; address: ConversationAddress; note: string }> = [];

  /** Like Slack's conversations.open: one direct chat per person, `D<id>`, at its top level. */
  async openDirectConversation(
    user: ChatUser,
    workspace: string,
    note: string,
  ): Promise<ConversationAddress> {
    const address = { platform: this.platform, workspace, channel: `D${user.id}`, thread: 'main' };
    this.directChats.push({ user, address, note });
    this.onEvent({ type: 'notice', text: note });
    return address;
  }

  async sendFile(target: ReplyTarget, file: OutboundFile): Promise<string> {
    this.sentFiles.push({ target, file });
    return `upload${++this.sequence}`;
  }

  /** Final texts of finished replies, in order. */
  finalTexts(): string[] {
    return this.replies.flatMap((reply) => (reply.finalText === undefined ? [] : [reply.finalText]));
  }

  lastCard(): RecordedCard {
    const card = this.cards.at(-1);
    if (!card) throw new Error('no approval card was posted');
    return card;
  }
}
