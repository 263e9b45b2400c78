import type {
  ChatAdapter,
  OpenReplyOptions,
  ReplyStream,
  ReplyTarget,
} from '../../core/contracts/adapter.js';
import type { ApprovalCard } from '../../core/contracts/approval-card.js';
import { mainThread } from '../../core/contracts/conversation-key.js';
import type { ConversationAddress, InboundMessage } from '../../core/contracts/events.js';
import { FileTooLargeError } from '../../core/contracts/files.js';
import type { InputForm } from '../../core/contracts/input-form.js';
import type { Logger } from '../../core/contracts/logger.js';
import type { ReplyDelivery } from '../connector.js';
import { type AgentSessions, createAgentSessions } from './agent-sessions.js';
import { renderApprovalCard } from './approval-blocks.js';
import { renderInputForm } from './input-form-blocks.js';
import { createSlackMessageSearch } from './message-search.js';
import { escapeMrkdwn, markdownToMrkdwn } from './mrkdwn.js';
import type { BotIdentity } from './normalize.js';
import { prepareMessage, UserNames } from './prepare.js';
import {
  isFeatureUnavailable,
  type ReplyTuning,
  replyThreadTs,
  type SlackCapabilities,
} from './reply-format.js';
import { SlackReply } from './reply-stream.js';
import type { SlackApi } from './slack-api.js';
import { SlackApiError } from './slack-api-error.js';

export interface SlackAdapterDependencies {
  api: SlackApi;
  logger: Logger;
  capabilities: SlackCapabilities;
  tuning: ReplyTuning;
  identity: () => BotIdentity | undefined;
  /** For the name cache only; reply pacing uses real time (it drives real timers). */
  now?: () => number;
  /** Hears how each reply went out (metrics). */
  onDelivered?: ((way: ReplyDelivery) => void) | undefined;
  /** The workspace's agent sessions (shared with the inbound stop handler); made here when absent. */
  sessions?: AgentSessions;
  /** Offers searching the workspace's messages (`message-search.ts`). */
  searchable?: boolean;
}

/** Shown while Butler works where assistant status does not apply. */
export const workingReaction = 'eyes';
const workingStatus = 'is thinking…';

function logFields(address: ConversationAddress): Record<string, unknown> {
  return {
    platform: 'slack',
    workspace: address.workspace,
    channel: address.channel,
    thread: address.thread,
  };
}

/**
 * The core's outbound port for Slack: replies, notices, approval cards, agent sessions or working indicators,
 * files.
 */
export function createSlackAdapter(dependencies: SlackAdapterDependencies): ChatAdapter {
  const { api, logger, capabilities, tuning } = dependencies;
  const names = new UserNames(api, logger, dependencies.now);
  const sessions = dependencies.sessions ?? createAgentSessions({ api, capabilities, logger });

  /** The assistant thread whose status shows Butler at work, or undefined where a reaction does instead. */
  function statusThread(target: ReplyTarget): { channel: string; threadTs: string } | undefined {
    const { channel } = target.address;
    const threadTs = replyThreadTs(target);
    // Assistant status exists for DMs (assistant threads); channels get a reaction instead.
    if (!channel.startsWith('D') || !threadTs || !capabilities.assistantStatus) return undefined;
    return { channel, threadTs };
  }

  // Working indicators are cosmetic: coalesced per thread or message, never waited on (cosmetic-calls.ts).
  // Clearing a status line (or a reaction) that never showed is no call at all.
  const statusLines = api.cosmetic<string>({
    unneeded: (shown, next) => (shown ?? '') === next,
    onRefused: (error) => {
      if (isFeatureUnavailable(error.slackError)) capabilities.assistantStatus = false;
    },
  });
  const reactions = api.cosmetic<boolean>({ unneeded: (shown, next) => (shown ?? false) === next });

  function setStatusLine(where: { channel: string; threadTs: string }, status: string): Promise<void> {
    const key = `${where.channel}:${where.threadTs}`;
    const args = { channel_id: where.channel, thread_ts: where.threadTs, status };
    return statusLines.set(key, status, 'assistant.threads.setStatus', args);
  }

  function setReaction(channel: string, ts: string, on: boolean): Promise<void> {
    const key = `${channel}:${ts}`;
    const method = on ? 'reactions.add' : 'reactions.remove';
    return reactions.set(key, on, method, { channel, timestamp: ts, name: workingReaction });
  }

  /** The indicator for `target` and the function that takes it away; neither waits for Slack. */
  function showIndicator(target: ReplyTarget): () => Promise<void> {
    const where = statusThread(target);
    if (where) {
      void setStatusLine(where, workingStatus);
      return () => setStatusLine(where, '');
    }
    const ts = target.replyTo;
    if (!ts) return async () => {};
    const { channel } = target.address;
    void setReaction(channel, ts, true);
    return () => setReaction(channel, ts, false);
  }

  return {
    platform: 'slack',

    async openReply(target: ReplyTarget, options?: OpenReplyOptions): Promise<ReplyStream> {
      return new SlackReply({
        api,
        logger: logger.child(logFields(target.address)),
        target,
        tuning,
        capabilities,
        session: sessions.foldFor(target),
        ...(dependencies.onDelivered ? { onDelivered: dependencies.onDelivered } : {}),
        ...(options?.resume ? { resume: options.resume } : {}),
        ...(options?.onMessageCreated ? { onMessageCreated: options.onMessageCreated } : {}),
      });
    },

    // Notices and cards go where the reply goes (in a DM, the thread of the message answered).
    async postNotice(target: ReplyTarget, text: string): Promise<void> {
      const threadTs = replyThreadTs(target);
      await api.postMessage({
        channel: target.address.channel,
        ...(threadTs ? { threadTs } : {}),
        text: markdownToMrkdwn(text),
      });
    },

    async postApprovalCard(target: ReplyTarget, card: ApprovalCard): Promise<string> {
      const threadTs = replyThreadTs(target);
      return api.postMessage({
        channel: target.address.channel,
        ...(threadTs ? { threadTs } : {}),
        ...renderApprovalCard(card),
        // A card answering no message is a copy (a reminder, an escalation): replies go first.
        ...(target.replyTo ? {} : { priority: 'routine' as const }),
      });
    },

    // A redraw after a decision or expiry: whoever decided has their answer already.
    async updateApprovalCard(
      address: ConversationAddress,
      messageId: string,
      card: ApprovalCard,
    ): Promise<void> {
      await api.updateMessage({
        channel: address.channel,
        ts: messageId,
        ...renderApprovalCard(card),
        priority: 'routine',
      });
    },

    // In the thread of the question's turn; the buttons are the requester's alone (the core checks each click).
    async postInputForm(target: ReplyTarget, form: InputForm): Promise<string> {
      const threadTs = replyThreadTs(target);
      return api.postMessage({
        channel: target.address.channel,
        ...(threadTs ? { threadTs } : {}),
        ...renderInputForm(form),
      });
    },

    turnStarted: sessions.turnStarted,
    turnEnded: sessions.turnEnded,
    turnWaiting: sessions.turnWaiting,

    async showWorking(target: ReplyTarget): Promise<() => Promise<void>> {
      // An agent session already shows Butler at work (and its stop button).
      if (await sessions.covers(target)) return async () => {};
      return showIndicator(target);
    },

    async showProgress(target: ReplyTarget, status: string): Promise<void> {
      // Where the working indicator is a reaction (or an agent session) there is no text to change.
      const where = statusThread(target);
      if (where && !(await sessions.covers(target))) await setStatusLine(where, status);
    },

    async findUnrecordedReplies(target, { after, known }) {
      const identity = dependencies.identity();
      if (!identity) return [];
      // Slack ts order is time order: nothing at or before the newest known message can be the orphan.
      const oldest = [after, ...known]
        .filter((ts) => Number.isFinite(Number(ts)))
        .reduce((newest, ts) => (Number(ts) > Number(newest) ? ts : newest), after);
      const threadTs = replyThreadTs(target);
      const listed = await api.messagesAfter({
        channel: target.address.channel,
        ...(threadTs ? { threadTs } : {}),
        oldest,
      });
      // Cards and shared files are not reply text to overwrite.
      return listed
        .filter((message) => Number(message.ts) > Number(oldest) && !known.includes(message.ts))
        .filter((message) => message.user === identity.userId || message.botId === identity.botId)
        .filter((message) => !message.hasActions && message.files.length === 0)
        .sort((left, right) => Number(left.ts) - Number(right.ts))
        .map((message) => message.ts);
    },

    async fetchFile(file, { maxBytes, signal }) {
      if (file.size !== undefined && file.size > maxBytes) throw new FileTooLargeError(maxBytes);
      const { bytes, mediaType } = await api.downloadFile({
        url: file.locator,
        maxBytes,
        htmlExpected: file.mimeType === 'text/html',
        signal,
      });
      // Slack serves some files as octet-stream; the type it listed on the message is then the better one.
      const served = mediaType === 'application/octet-stream' ? undefined : mediaType;
      return { name: file.name, mimeType: served ?? file.mimeType ?? 'application/octet-stream', bytes };
    },

    // In the thread the reply goes to: in a DM, under the person's message (as notices and cards).
    async sendFile(target, file) {
      const threadTs = replyThreadTs(target);
      return api.uploadFile({
        channel: target.address.channel,
        ...(threadTs ? { threadTs } : {}),
        filename: file.name,
        title: file.name,
        bytes: file.bytes,
      });
    },

    // "Remind me" asked in a channel: the runs go to the person's DM, which the note opens at its top level.
    async openDirectConversation(user, workspace, note) {
      const channel = await api.openDirectChannel(user.id);
      await api.postMessage({ channel, text: markdownToMrkdwn(note) });
      return { platform: 'slack', workspace, channel, thread: mainThread };
    },

    // Only the person sees it: an ephemeral message where they asked, else their DM (not a channel member).
    async sendPrivateLink(target, user, link) {
      const text = `${escapeMrkdwn(link.text)}\n<${link.url}|${escapeMrkdwn(link.label)}>`;
      const blocks = [{ type: 'section', text: { type: 'mrkdwn', text } }];
      const threadTs = replyThreadTs(target);
      try {
        await api.postEphemeral({
          channel: target.address.channel,
          user: user.id,
          text,
          blocks,
          ...(threadTs ? { threadTs } : {}),
        });
      } catch (error) {
        if (!(error instanceof SlackApiError) || error.slackError !== 'user_not_in_channel') throw error;
        const channel = await api.openDirectChannel(user.id);
        await api.postMessage({ channel, text, blocks });
      }
    },

    nameOf: (userId) => names.get(userId),

    ...(dependencies.searchable ? { messageSearch: createSlackMessageSearch(api, logger) } : {}),

    prepare: (message: InboundMessage, options: { newConversation: boolean }) =>
      prepareMessage({ api, names, identity: dependencies.identity, logger }, message, options),
  };
}
