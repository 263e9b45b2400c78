import { randomUUID } from 'node:crypto';
import type {
  ChatAdapter,
  OpenReplyOptions,
  ReplyStream,
  ReplyTarget,
  TurnEvent,
} from '../../core/contracts/adapter.js';
import { pendingCalls } from '../../core/contracts/approval-card.js';
import type { ConversationEvent } from '../../core/contracts/conversation-events.js';
import { encodeConversationKey } from '../../core/contracts/conversation-key.js';
import type { Logger } from '../../core/contracts/logger.js';
import type { ConversationFeed } from './conversation-feed.js';
import { filePath } from './file-routes.js';

/**
 * The core's outbound port for the HTTP API: what other channels show as messages and cards becomes
 * stored conversation events (`delta`, `message`, `confirm_required`, `file`, tool calls, `done`, `error`).
 */

const keyOf = (target: ReplyTarget) => encodeConversationKey(target.address);

/** Streamed text is stored in slices of at most this long a wait, not one row per token. */
const deltaFlushMs = 50;

class ApiReply implements ReplyStream {
  readonly messageIds: string[];
  private pending = '';
  private timer: NodeJS.Timeout | undefined;
  private writes: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly feed: ConversationFeed,
    private readonly conversationKey: string,
    private readonly options: OpenReplyOptions,
    private readonly logger: Logger,
    private readonly openReplies: Map<string, ApiReply>,
  ) {
    this.messageIds = [...(options.resume ?? []).slice(0, 1)];
    openReplies.set(conversationKey, this);
  }

  /** Stores the text written so far; other events of the turn go after it. */
  async settle(): Promise<void> {
    this.flush();
    await this.writes;
  }

  async append(delta: string): Promise<void> {
    if (this.messageIds.length === 0) {
      const id = `reply-${randomUUID()}`;
      this.messageIds.push(id);
      await this.options.onMessageCreated?.(id);
    }
    this.pending += delta;
    this.timer ??= setTimeout(() => this.flush(), deltaFlushMs);
  }

  async finish(text: string): Promise<void> {
    await this.settle();
    if (this.openReplies.get(this.conversationKey) === this) this.openReplies.delete(this.conversationKey);
    await this.feed.append(this.conversationKey, [{ type: 'message', role: 'assistant', content: text }]);
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.pending) return;
    const text = this.pending;
    this.pending = '';
    // Slices are written in order; a failed one is lost from the live stream only: `message` has it all.
    this.writes = this.writes
      .then(() => this.feed.append(this.conversationKey, [{ type: 'delta', text }]))
      .catch((error: unknown) => this.logger.warn({ err: error }, 'could not store a reply delta'));
  }
}

export function createApiAdapter(feed: ConversationFeed, logger: Logger, apiPrefix: string): ChatAdapter {
  // Each conversation's reply being written: its buffered text is stored before any other event of the
  // turn (a tool call, an approval request), so the stream keeps the model's order.
  const openReplies = new Map<string, ApiReply>();
  const appendInOrder = async (target: ReplyTarget, events: ConversationEvent[]) => {
    const key = keyOf(target);
    await openReplies.get(key)?.settle();
    await feed.append(key, events);
  };

  return {
    platform: 'api',

    async openReply(target, options = {}) {
      return new ApiReply(feed, keyOf(target), options, logger, openReplies);
    },

    async postNotice(target, text) {
      await appendInOrder(target, [{ type: 'message', role: 'assistant', content: text }]);
    },

    async postApprovalCard(target, card) {
      await appendInOrder(
        target,
        pendingCalls(card).map((call) => ({
          type: 'confirm_required' as const,
          approvalId: call.approvalId,
          tool: call.toolName,
          args: parseArguments(call.argumentsJson),
          summary: call.summary,
          risk: call.risk,
          expiresAt: card.expiresAt.toISOString(),
          ...answersOf(target),
        })),
      );
      return `approval-${card.batchId}`;
    },

    // The question is an event of the key's own stream: only that key can answer it.
    async postInputForm(target, form) {
      await appendInOrder(target, [
        {
          type: 'input_required',
          inputId: form.inputId,
          server: form.server,
          tool: form.tool,
          requests: form.requests.map((request) =>
            request.mode === 'url'
              ? { key: request.key, mode: 'url', message: request.message, url: request.url }
              : {
                  key: request.key,
                  mode: 'form',
                  message: request.message,
                  requestedSchema: request.requestedSchema,
                },
          ),
          expiresAt: form.expiresAt.toISOString(),
          ...answersOf(target),
        },
      ]);
      // Not an end of the reply: a 2025 server's question is asked while its turn writes on (a parked turn
      // finished its reply before its question was posted).
      return `input-${form.inputId}`;
    },

    // The API has no card to redraw: a client reads an approval's state from GET /api/v1/approvals.
    async updateApprovalCard() {},

    async showWorking() {
      return async () => {};
    },

    // The bytes stay stored; the event links to them (`GET /api/v1/files/{id}`).
    async sendFile(target, file) {
      await appendInOrder(target, [
        {
          type: 'file',
          id: file.id,
          name: file.name,
          mimeType: file.mimeType,
          size: file.bytes.byteLength,
          url: filePath(apiPrefix, file.id),
        },
      ]);
      return file.id;
    },

    // A conversation of the API is its key's alone: a link for that key goes into its events, without its URL,
    // which the stream shows while the link can still be used (`ConversationFeed`).
    async sendPrivateLink(target, user, link) {
      if (user.id !== target.address.workspace)
        throw new Error('the API reaches only the key a conversation belongs to');
      await appendInOrder(target, [
        {
          type: 'private_link',
          text: link.text,
          label: link.label,
          linkId: link.id,
          expiresAt: link.expiresAt.toISOString(),
        },
      ]);
    },

    async onTurnEvent(target, turnEvent) {
      const event = storedEvent(turnEvent);
      const ends = event.type === 'done' || event.type === 'error' || event.type === 'connection_required';
      await appendInOrder(target, [ends ? { ...event, ...answersOf(target) } : event]);
      if (ends) openReplies.delete(keyOf(target));
    },
  };
}

/** The messages a turn answers, as its end event lists them; a continuation after approval answers `replyTo`. */
function answersOf(target: ReplyTarget): { answers?: string[] } {
  const ids = target.messageIds ?? (target.replyTo ? [target.replyTo] : []);
  return ids.length > 0 ? { answers: [...ids] } : {};
}

/** The card's arguments text back as JSON; a card cuts very long arguments, which then stay text. */
function parseArguments(argumentsJson: string): unknown {
  try {
    return JSON.parse(argumentsJson);
  } catch {
    return argumentsJson;
  }
}

/**
 * A turn event as the conversation's log keeps it: a scheduled run's prompt is a user message of its task; what
 * failed inside Butler (an error's `detail`: an endpoint, a network error) is for its operator, not API clients.
 */
function storedEvent(event: TurnEvent): ConversationEvent {
  if (event.type === 'error') return { type: 'error', error: event.error };
  if (event.type === 'run')
    return { type: 'message', role: 'user', content: event.prompt, scheduleId: event.scheduleId };
  return event;
}
