import { truncateText } from '../../core/approval-card.js';
import { markdownToMrkdwn } from './mrkdwn.js';
import type { SlackBlocks } from './slack-api.js';

/** Slack's limit for streamed Markdown and for markdown blocks (cumulative per message). */
export const slackMarkdownLimit = 12_000;

/** What adapters have learnt about this workspace at run time; shared by all replies. */
export interface SlackCapabilities {
  /** Channel ids where chat.startStream is unsupported; `*` when it is unsupported everywhere. */
  streamingUnavailable: Set<string>;
  /** Cleared after Slack refuses a `markdown` block; posts then carry converted mrkdwn only. */
  markdownBlocks: boolean;
}

export function createCapabilities(): SlackCapabilities {
  return { streamingUnavailable: new Set(), markdownBlocks: true };
}

/** Errors that mean "streaming will not work here", not "this call failed". */
const streamingUnsupportedEverywhere = new Set([
  'unknown_method',
  'feature_not_enabled',
  'missing_scope',
  'not_allowed_token_type',
]);
const streamingUnsupportedInChannel = new Set(['method_not_supported_for_channel_type', 'not_allowed']);

export function recordStreamingFailure(
  capabilities: SlackCapabilities,
  channel: string,
  slackError: string,
): void {
  if (streamingUnsupportedEverywhere.has(slackError)) capabilities.streamingUnavailable.add('*');
  if (streamingUnsupportedInChannel.has(slackError)) capabilities.streamingUnavailable.add(channel);
}

export function streamingAvailable(capabilities: SlackCapabilities, channel: string): boolean {
  return !capabilities.streamingUnavailable.has('*') && !capabilities.streamingUnavailable.has(channel);
}

/** A posted (not streamed) reply: a markdown block Slack renders, with mrkdwn as the notification text. */
export function staticMessage(
  markdown: string,
  markdownBlocks: boolean,
): { text: string; blocks?: SlackBlocks } {
  const mrkdwn = markdownToMrkdwn(markdown);
  if (!markdownBlocks) return { text: mrkdwn };
  return { text: truncateText(mrkdwn, 3000), blocks: [{ type: 'markdown', text: markdown }] };
}
