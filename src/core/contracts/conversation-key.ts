import { type ConversationAddress, type Platform, platforms } from './events.js';

/**
 * The one codec for conversation keys: `{platform}:{workspace}:{channel}:{thread}`.
 * Parts are percent-encoded so ids containing `:` (Slack timestamps do not, but custom ids may) round-trip.
 */
export const mainThread = 'main';

function encodePart(part: string): string {
  if (part.length === 0) throw new Error('Conversation key parts must not be empty');
  return encodeURIComponent(part);
}

export function encodeConversationKey(address: ConversationAddress): string {
  return [address.platform, address.workspace, address.channel, address.thread].map(encodePart).join(':');
}

/** What the keys of every conversation of a workspace start with. */
export function workspaceKeyPrefix(platform: Platform, workspace: string): string {
  return `${[platform, workspace].map(encodePart).join(':')}:`;
}

/** What the keys of every thread of the address's channel start with. */
export function channelKeyPrefix(address: ConversationAddress): string {
  return `${[address.platform, address.workspace, address.channel].map(encodePart).join(':')}:`;
}

export function decodeConversationKey(key: string): ConversationAddress {
  const parts = key.split(':').map(decodeURIComponent);
  const [platform, workspace, channel, thread] = parts;
  if (parts.length !== 4 || !platform || !workspace || !channel || !thread) {
    throw new Error(`Malformed conversation key: ${key}`);
  }
  if (!(platforms as readonly string[]).includes(platform)) {
    throw new Error(`Unknown platform in conversation key: ${platform}`);
  }
  return { platform: platform as Platform, workspace, channel, thread };
}
