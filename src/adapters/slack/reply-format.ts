import type { ReplyTarget } from '../../core/contracts/adapter.js';
import { mainThread } from '../../core/contracts/conversation-key.js';
import { truncateText } from '../../core/text/index.js';
import { markdownToMrkdwn } from './mrkdwn.js';
import { SlackApiError, type SlackBlocks } from './slack-api.js';

/** Slack's limit for streamed Markdown and for markdown blocks (cumulative per message). */
export const slackMarkdownLimit = 12_000;

export interface ReplyTuning {
  /** Longest Markdown per Slack message; below Slack's 12,000 to leave room for fence repairs. */
  messageLimit: number;
  /** Minimum spacing of chat.update calls on one message (the post-then-edit fallback). */
  updateIntervalMs: number;
  /** Minimum spacing of chat.appendStream calls on one stream. */
  streamIntervalMs: number;
}

export const defaultReplyTuning: ReplyTuning = {
  messageLimit: slackMarkdownLimit - 1000,
  updateIntervalMs: 1000,
  streamIntervalMs: 600,
};

/** What adapters have learnt about this workspace at run time; shared by all replies. */
export interface SlackCapabilities {
  /** Places (see `streamingPlace`) where chat.startStream failed for good; `*` when it fails everywhere. */
  streamingUnavailable: Set<string>;
  /** Cleared once assistant.threads.setStatus proves unavailable (no AI app feature): reactions only. */
  assistantStatus: boolean;
  /** Cleared once agents.sessions.setStatus proves unavailable (not an agent app): working indicators instead. */
  agentSessions: boolean;
}

export function createCapabilities(): SlackCapabilities {
  return { streamingUnavailable: new Set(), assistantStatus: true, agentSessions: true };
}

/** Errors that mean "streaming will not work for this app at all". */
const streamingUnsupportedEverywhere = new Set([
  'unknown_method',
  'feature_not_enabled',
  'missing_scope',
  'not_allowed_token_type',
]);
/** Errors worth trying again next time; any other error is taken as "not here". */
const transientErrors = new Set([
  'ratelimited',
  'request_failed',
  'internal_error',
  'fatal_error',
  'service_unavailable',
]);

/** Whether a failed feature call means "not available to this app" rather than "not this time". */
export function isFeatureUnavailable(slackError: string): boolean {
  return (
    streamingUnsupportedEverywhere.has(slackError) ||
    slackError === 'not_allowed' ||
    slackError === 'method_not_supported_for_channel_type' ||
    // agents.sessions.setStatus where agent tasks are off in the workspace (its method page).
    slackError === 'feature_disabled' ||
    slackError === 'not_agent_app'
  );
}

export function isTransientSlackError(slackError: string): boolean {
  return transientErrors.has(slackError) || slackError.startsWith('http_');
}

/**
 * The thread a reply goes in: a channel's or DM thread's own, and in a DM's top level the thread of the
 * message it answers, since Slack streams only replies (chat.startStream requires thread_ts: platforms.md
 * "Checked since"). The conversation stays the DM's `main`; only the messages go in the thread.
 */
export function replyThreadTs(target: ReplyTarget): string | undefined {
  const { thread } = target.address;
  return thread === mainThread ? target.replyTo : thread;
}

/** Where streaming was tried: a channel's top level and its threads can differ (DMs in particular). */
export function streamingPlace(channel: string, threadTs: string | undefined): string {
  return `${channel}:${threadTs ? 'thread' : 'top'}`;
}

export function recordStreamingFailure(
  capabilities: SlackCapabilities,
  place: string,
  slackError: string,
): void {
  if (streamingUnsupportedEverywhere.has(slackError)) capabilities.streamingUnavailable.add('*');
  else if (!isTransientSlackError(slackError)) capabilities.streamingUnavailable.add(place);
}

export function streamingAvailable(capabilities: SlackCapabilities, place: string): boolean {
  return !capabilities.streamingUnavailable.has('*') && !capabilities.streamingUnavailable.has(place);
}

/**
 * A posted (not streamed) reply: a markdown block Slack renders, with mrkdwn as the notification text, and
 * `extra` blocks below it (the feedback buttons of a reply's last message). Plain mrkdwn text has no blocks.
 */
export function staticMessage(
  markdown: string,
  markdownBlocks: boolean,
  extra: SlackBlocks = [],
): { text: string; blocks?: SlackBlocks } {
  const mrkdwn = markdownToMrkdwn(markdown);
  if (!markdownBlocks) return { text: mrkdwn };
  return { text: truncateText(mrkdwn, 3000), blocks: [{ type: 'markdown', text: markdown }, ...extra] };
}

/**
 * Sends one posted message as a markdown block; once Slack refuses that message's block, the message (and only
 * it: the content was at fault, not the workspace) carries converted mrkdwn from then on.
 */
export async function withMarkdownFallback<T>(
  message: { markdownBlocks: boolean },
  send: (markdownBlocks: boolean) => Promise<T>,
): Promise<T> {
  try {
    return await send(message.markdownBlocks);
  } catch (error) {
    const refused = error instanceof SlackApiError && error.slackError === 'invalid_blocks';
    if (!refused || !message.markdownBlocks) throw error;
    message.markdownBlocks = false;
    return send(false);
  }
}
