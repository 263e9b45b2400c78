import type { LaneSpec, RateLimit } from '../pacing/index.js';

/**
 * Slack's rate tiers as data (platforms.md, "Checked since", Rate tiers): per method, per app, per workspace,
 * Tier 2 20+/min, Tier 3 50+/min, Tier 4 100+/min; the "+" is Slack's slack, the count is what it promises.
 */
const minute = 60_000;
const tier2: RateLimit = { limit: 20, windowMs: minute };
const tier3: RateLimit = { limit: 50, windowMs: minute };
const tier4: RateLimit = { limit: 100, windowMs: minute };

/** Tiers from the method pages (platforms.md §5 and "Checked since"); other methods only honour Retry-After. */
export const slackMethodTiers: Readonly<Record<string, RateLimit>> = {
  'chat.startStream': tier2,
  'chat.stopStream': tier2,
  'chat.appendStream': tier4,
  'chat.update': tier3,
  // Tier 4 on both method pages (api.slack.com/methods/files.getUploadURLExternal, …/files.completeUploadExternal).
  'files.getUploadURLExternal': tier4,
  'files.completeUploadExternal': tier4,
  // Tier 3 per slack-morphism's agents.rs (platforms.md "Agent apps"); Tier 4 on the method page.
  'agents.sessions.setStatus': tier3,
  'assistant.threads.setSuggestedPrompts': tier4,
  // Tier 4 (docs.slack.dev/reference/methods/views.publish).
  'views.publish': tier4,
  // Tier 3 (docs.slack.dev/reference/methods/conversations.open).
  'conversations.open': tier3,
  // Tier 4 (docs.slack.dev/reference/methods/users.info): a burst of new people spends it in a minute.
  'users.info': tier4,
  // The method page gives "special rate limits" and no number: paced as Tier 2 until Slack publishes one.
  'assistant.search.context': tier2,
  // Tier 3 (docs.slack.dev/reference/methods/conversations.info).
  'conversations.info': tier3,
};

/**
 * chat.postMessage: "about 1 message/s per channel, short bursts" (platforms.md §5), read as 3 in any 3 s. Its
 * workspace-wide limit has no documented number, so only Retry-After guards it.
 */
export const postMessagePerChannel: RateLimit = { limit: 3, windowMs: 3000 };

export type SharedSlackMethod = 'chat.appendStream' | 'chat.update';

/**
 * The budget a call counts against: the method in the workspace, or for posts the channel. Without `tiers` (a
 * Slack stand-in that does not enforce them) a lane only honours Retry-After.
 */
export function slackLane(
  workspace: string,
  method: string,
  args: Record<string, unknown>,
  tiers = true,
): LaneSpec {
  if (method === 'chat.postMessage' && typeof args.channel === 'string') {
    const key = `slack:${workspace}:${method}:${args.channel}`;
    return { key, limits: tiers ? [postMessagePerChannel] : [] };
  }
  const tier = tiers ? slackMethodTiers[method] : undefined;
  return { key: `slack:${workspace}:${method}`, limits: tier ? [tier] : [] };
}
