import type {
  ChatAdapter,
  OpenReplyOptions,
  PreparedMessage,
  ReplyStream,
  ReplyTarget,
} from '../../core/contracts/adapter.js';
import { type ApprovalCard, pendingCalls } from '../../core/contracts/approval-card.js';
import { encodeConversationKey, mainThread } from '../../core/contracts/conversation-key.js';
import type { ConversationAddress, InboundMessage } from '../../core/contracts/events.js';
import type { FileBytes, InboundFile, OutboundFile } from '../../core/contracts/files.js';
import type { InputForm } from '../../core/contracts/input-form.js';
import type { Logger } from '../../core/contracts/logger.js';
import type { ReplyDelivery } from '../connector.js';
import { renderApprovalCard } from './approval-card.js';
import type { CardkitHealth } from './cardkit-health.js';
import { destinationFor } from './destination.js';
import type { FeishuApi } from './feishu-api-types.js';
import { forwardedHistoryText } from './forwarded-history.js';
import { renderInputFormCard } from './input-form-card.js';
import { linkCard } from './link-card.js';
import { defuseMentions } from './mentions.js';
import { parseFileLocator } from './message-files.js';
import { createFeishuMessageSearch } from './message-search.js';
import { sendFeishuFile } from './outbound-files.js';
import { FeishuReplyStream } from './reply-stream.js';
import { stopValueFor } from './stop-button.js';
import type { StreamSettings } from './stream-settings.js';
import { FeishuTopics } from './topics.js';
import { type FeishuUserNames, prepareFeishuMessage } from './user-names.js';
import { welcomeCard } from './welcome-card.js';

export interface FeishuChatAdapterOptions {
  api: FeishuApi;
  logger: Logger;
  now: () => number;
  settings: StreamSettings;
  cardkit: CardkitHealth;
  /** People's names, shared with the card clicks (who stopped a reply). */
  names: FeishuUserNames;
  /** The welcome card's prompts (`feishu.suggestedPrompts`); none or absent: no welcome card. */
  suggestedPrompts?: readonly string[];
  /** Hears how each reply went out (metrics). */
  onDelivered?: ((way: ReplyDelivery) => void) | undefined;
  /** Set where people search messages as themselves: the Open API base URL (which names the app links). */
  searchBaseUrl?: string;
}

/** Feishu's "typing" emoji: shown on the user's message while Butler works. */
export const workingEmoji = 'Typing';
/** How long the typing reaction waits for room in a busy app's budget before it is not worth showing. */
const workingMaxWaitMs = 60_000;

export function createFeishuChatAdapter(options: FeishuChatAdapterOptions): ChatAdapter {
  const { api, logger, names } = options;
  const topics = new FeishuTopics(api, logger, options.now);
  const conversationLogger = (address: ConversationAddress) =>
    logger.child({ conversation: encodeConversationKey(address) });

  /** The welcome card, before the answer; a card that cannot be sent is logged, and the answer goes on. */
  async function welcome(address: ConversationAddress, prompts: readonly string[]): Promise<void> {
    try {
      const messageId = await api.sendMessage(destinationFor({ address, userId: '' }), {
        msgType: 'interactive',
        content: welcomeCard(prompts),
      });
      conversationLogger(address).info({ messageId }, 'Feishu welcome card sent');
    } catch (error) {
      conversationLogger(address).warn({ err: error }, 'Feishu welcome card not sent');
    }
  }

  return {
    platform: 'feishu',
    ...(options.searchBaseUrl
      ? { messageSearch: createFeishuMessageSearch({ api, names, baseUrl: options.searchBaseUrl, logger }) }
      : {}),

    async openReply(target: ReplyTarget, replyOptions?: OpenReplyOptions): Promise<ReplyStream> {
      return new FeishuReplyStream({
        api,
        destination: await topics.destination(target),
        logger: conversationLogger(target.address),
        now: options.now,
        settings: options.settings,
        cardkit: options.cardkit,
        resume: replyOptions?.resume ?? [],
        onMessageCreated: replyOptions?.onMessageCreated,
        stop: stopValueFor(target.address),
        onDelivered: options.onDelivered,
      });
    },

    async postNotice(target: ReplyTarget, text: string): Promise<void> {
      await topics.send(target, (destination) =>
        api.sendMessage(destination, { msgType: 'text', content: { text: defuseMentions(text) } }),
      );
    },

    async postApprovalCard(target: ReplyTarget, card: ApprovalCard): Promise<string> {
      const messageId = await topics.send(target, (destination) =>
        api.sendMessage(destination, { msgType: 'interactive', content: renderApprovalCard(card) }),
      );
      conversationLogger(target.address).info(
        { batchId: card.batchId, calls: card.calls.length, messageId },
        'Feishu approval card posted',
      );
      return messageId;
    },

    // In the conversation where the call was asked; the form's values reach the core, which checks the clicker.
    async postInputForm(target: ReplyTarget, form: InputForm): Promise<string> {
      const messageId = await topics.send(target, (destination) =>
        api.sendMessage(destination, { msgType: 'interactive', content: renderInputFormCard(form) }),
      );
      conversationLogger(target.address).info({ inputId: form.inputId, messageId }, 'Feishu question posted');
      return messageId;
    },

    async updateApprovalCard(
      address: ConversationAddress,
      messageId: string,
      card: ApprovalCard,
    ): Promise<void> {
      await api.patchMessage(messageId, renderApprovalCard(card));
      conversationLogger(address).info(
        { batchId: card.batchId, messageId, pending: pendingCalls(card).length },
        'Feishu approval card updated',
      );
    },

    // Cosmetic: the reaction waits for room behind every other call and is given up after a minute, or when
    // the turn ends first; taking it away happens only if it showed.
    async showWorking(target: ReplyTarget): Promise<() => Promise<void>> {
      const messageId = target.replyTo;
      if (!messageId) return async () => {};
      const abort = new AbortController();
      const giveUp = setTimeout(() => abort.abort(), workingMaxWaitMs);
      const shown = api
        .addReaction(messageId, workingEmoji, abort.signal)
        .catch((error: unknown) => {
          logger.debug({ messageId, err: error }, 'Feishu working indicator not shown');
          return undefined;
        })
        .finally(() => clearTimeout(giveUp));
      return async () => {
        abort.abort();
        const reactionId = await shown;
        if (reactionId === undefined) return;
        try {
          await api.deleteReaction(messageId, reactionId);
        } catch (error) {
          logger.debug({ messageId, err: error }, 'Feishu working indicator not removed');
        }
      };
    },

    async fetchFile(
      file: InboundFile,
      fetchOptions: { maxBytes: number; signal?: AbortSignal },
    ): Promise<FileBytes> {
      const { bytes, mimeType } = await api.downloadResource(parseFileLocator(file.locator), fetchOptions);
      return { name: file.name, mimeType: mimeType ?? file.mimeType ?? 'application/octet-stream', bytes };
    },

    async sendFile(target: ReplyTarget, file: OutboundFile): Promise<string> {
      const messageId = await topics.send(target, (destination) => sendFeishuFile(api, destination, file));
      conversationLogger(target.address).info(
        { fileId: file.id, mimeType: file.mimeType, bytes: file.bytes.byteLength, messageId },
        'Feishu file sent',
      );
      return messageId;
    },

    // "Remind me" asked in a group: sent by open_id, the note lands in (and names) the person's direct chat.
    async openDirectConversation(user, workspace, note): Promise<ConversationAddress> {
      const { chatId, messageId } = await api.sendToPerson(user.id, {
        msgType: 'text',
        content: { text: defuseMentions(note) },
      });
      const address: ConversationAddress = {
        platform: 'feishu',
        workspace,
        channel: chatId,
        thread: mainThread,
      };
      conversationLogger(address).info({ messageId }, 'Feishu direct chat opened with a note');
      return address;
    },

    // A Connect link goes to the person's direct chat (sent by open_id), never into a group, whoever is there.
    async sendPrivateLink(_target, user, link) {
      await api.sendToPerson(user.id, { msgType: 'interactive', content: linkCard(link) });
    },

    nameOf: (userId, workspace) => names.get(workspace, userId),

    async prepare(message: InboundMessage, { newConversation }): Promise<PreparedMessage> {
      // A direct chat is one conversation per person: its first message is the first they sent Butler.
      const prompts = options.suggestedPrompts ?? [];
      if (newConversation && message.isDirect && prompts.length > 0) await welcome(message.address, prompts);
      const tenantKey = message.address.workspace;
      return prepareFeishuMessage(names, message, (messageId) =>
        forwardedHistoryText(api, messageId, (openId) => names.get(tenantKey, openId), logger),
      );
    },
  };
}
