import { mainThread } from '../../core/contracts/conversation-key.js';
import type { InboundMessage } from '../../core/contracts/events.js';
import { messageContent, writtenText } from './attachments.js';
import { mentionsUser } from './inbound-text.js';
import { installationSourceOf } from './installation-source.js';
import { isRecord } from './parse.js';
import { sharedFiles } from './shared-files.js';

/** Who Butler is in this workspace (from auth.test): needed to recognise its own posts and mentions. */
export interface BotIdentity {
  userId: string;
  botId: string;
  teamId: string;
  /** An Enterprise Grid org's id, when the workspace is in one (or the token is an org-wide install's). */
  enterpriseId?: string | undefined;
  /** The token is an org-wide install's (auth.test `is_enterprise_install`): it serves the whole org. */
  orgWide?: boolean | undefined;
}

export interface NormalizeOptions {
  identity: BotIdentity;
  /** Answer other bots' messages (config file `answerBots`). */
  answerBots: boolean;
}

export type NormalizeResult =
  | {
      kind: 'message';
      message: InboundMessage;
      /** A plain channel message: accept it only in a thread Butler already takes part in. */
      requiresKnownConversation: boolean;
    }
  | { kind: 'ignored'; reason: string };

/** Subtypes that are still a person (or, with answerBots, a bot) writing to Butler; `file_share` may have no text. */
const answerableSubtypes = new Set(['thread_broadcast', 'file_share']);

function text(record: Record<string, unknown>, key: string): string | undefined {
  const value = record[key];
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

/** Slack `ts` ("1716123456.000200") → ISO 8601. */
export function timestampToIso(ts: string): string {
  const seconds = Number(ts);
  return Number.isFinite(seconds)
    ? new Date(Math.round(seconds * 1000)).toISOString()
    : new Date(0).toISOString();
}

/** The installation a token belongs to: its enterprise for an org-wide token, else its workspace. */
export const installationKeyOfIdentity = (identity: BotIdentity): string =>
  identity.orgWide && identity.enterpriseId ? identity.enterpriseId : identity.teamId;

/** Slackbot's own user id: its posts in Butler's DM are system notices ("… archived #deploys"), not questions. */
export const slackbotUserId = 'USLACKBOT';

/**
 * The workspace is the team the app is installed in (envelope), stable even for Slack Connect senders. An org-wide
 * install (Enterprise Grid) serves the whole org with one token: its conversations belong to the enterprise
 * (`E…`; channel ids are unique across an org), so that every reply finds that installation.
 */
export function workspaceOf(
  body: Record<string, unknown>,
  event: Record<string, unknown>,
): string | undefined {
  const source = installationSourceOf(body);
  if (source.isEnterpriseInstall && source.enterpriseId) return source.enterpriseId;
  return source.teamId ?? text(event, 'team');
}

/**
 * The sender's name when the event carries one: a person's `user_profile`, else a bot's `bot_profile.name` or a
 * legacy integration's `username` (users.info cannot name a `B…` bot id, so the model would see only the id).
 */
function senderName(event: Record<string, unknown>): string | undefined {
  const profile = event.user_profile;
  if (isRecord(profile)) {
    const name = text(profile, 'display_name') ?? text(profile, 'real_name') ?? text(profile, 'name');
    if (name) return name;
  }
  const botProfile = event.bot_profile;
  return (isRecord(botProfile) ? text(botProfile, 'name') : undefined) ?? text(event, 'username');
}

/**
 * An `app_mention` or `message` event (with its envelope) → the core's InboundMessage, or the reason
 * it is not Butler's to answer. Applies only Slack-level rules; allowlists and rate limits are the core's.
 */
export function normalizeMessageEvent(
  body: unknown,
  event: unknown,
  options: NormalizeOptions,
): NormalizeResult {
  if (!isRecord(body) || !isRecord(event)) return { kind: 'ignored', reason: 'malformed' };
  const type = text(event, 'type');
  if (type !== 'app_mention' && type !== 'message') return { kind: 'ignored', reason: 'not_a_message' };
  const { identity } = options;
  const subtype = text(event, 'subtype');
  const botId = text(event, 'bot_id');
  const user = text(event, 'user');
  if (botId === identity.botId || (user !== undefined && user === identity.userId)) {
    return { kind: 'ignored', reason: 'own_message' };
  }
  if (user === slackbotUserId) return { kind: 'ignored', reason: 'slackbot' };
  const fromBot = botId !== undefined || subtype === 'bot_message';
  if (fromBot && !options.answerBots) return { kind: 'ignored', reason: 'bot_message' };
  if (
    subtype !== undefined &&
    !answerableSubtypes.has(subtype) &&
    !(subtype === 'bot_message' && options.answerBots)
  ) {
    return { kind: 'ignored', reason: `subtype_${subtype}` };
  }
  if (event.hidden === true) return { kind: 'ignored', reason: 'hidden' };

  const channel = text(event, 'channel');
  const ts = text(event, 'ts');
  const senderId = user ?? botId;
  const workspace = workspaceOf(body, event);
  if (!channel || !ts || !senderId || !workspace) return { kind: 'ignored', reason: 'missing_fields' };

  const threadTs = text(event, 'thread_ts');
  const isDirect = type === 'message' && event.channel_type === 'im';
  let thread: string;
  let requiresKnownConversation = false;
  if (isDirect) {
    thread = threadTs ?? mainThread;
  } else if (type === 'app_mention') {
    thread = threadTs ?? ts;
  } else {
    // A plain channel message: app_mention covers mentions; this only answers follow-ups in Butler's threads.
    if (!threadTs) return { kind: 'ignored', reason: 'channel_message_outside_thread' };
    thread = threadTs;
    requiresKnownConversation = true;
  }

  // Agent apps get the sender's action token (search as them) on the event, or in its assistant_thread: that
  // one only when the thread names the sender as its person (never another person's token).
  const agentThread = isRecord(event.assistant_thread) ? event.assistant_thread : undefined;
  const threadPerson = agentThread ? (text(agentThread, 'user_id') ?? senderId) : undefined;
  const actionToken =
    text(event, 'action_token') ??
    (agentThread && threadPerson === senderId ? text(agentThread, 'action_token') : undefined);
  const ownText = text(event, 'text') ?? '';
  // Some clients and apps send only blocks (`text` empty); the blocks then carry what the person wrote.
  const rawText = writtenText(ownText, event.blocks);
  const cleaned = messageContent({ ...event, text: ownText }, identity.userId);
  const name = senderName(event);
  const files = sharedFiles(event.files);
  // In a Slack Connect channel the sender may belong to another workspace than the app's (`user_team`).
  const team = text(event, 'user_team') ?? text(event, 'team');
  const message: InboundMessage = {
    kind: 'message',
    address: { platform: 'slack', workspace, channel, thread },
    messageId: ts,
    eventId: text(body, 'event_id') ?? `${workspace}:${channel}:${ts}`,
    // A channel id and ts name a message only within a workspace: the same pair in another one is another message.
    dedupKey: `${workspace}:${channel}:${ts}`,
    user: {
      id: senderId,
      ...(name ? { name } : {}),
      ...(team && team !== workspace ? { team } : {}),
    },
    // Files alone are a message: the core describes them to the model.
    text: cleaned || (files.length > 0 ? '' : '(empty message)'),
    isMention: type === 'app_mention' || mentionsUser(rawText, identity.userId),
    isDirect,
    sentAt: timestampToIso(ts),
    ...(files.length > 0 ? { files } : {}),
    ...(actionToken ? { grant: actionToken } : {}),
  };
  return { kind: 'message', message, requiresKnownConversation };
}
