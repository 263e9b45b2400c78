import type { InboundFile } from './files.js';

/** Normalized inbound events: what every platform adapter turns its payloads into. */

export const platforms = ['slack', 'feishu', 'console', 'api'] as const;
export type Platform = (typeof platforms)[number];

/** Where a conversation lives. Encoded as a conversation key by `conversation-key.ts`. */
export interface ConversationAddress {
  platform: Platform;
  /** Slack team id, Feishu tenant key, `local` for the terminal. */
  workspace: string;
  /** Slack channel id, Feishu chat id. */
  channel: string;
  /** Thread anchor, or `main` for the top level of a direct-message chat. */
  thread: string;
}

export interface ChatUser {
  /** Platform user id (Slack `U…`, Feishu `ou_…`). Authority for approvals, with the platform (as people). */
  id: string;
  /** Display name, when the adapter knows it. */
  name?: string;
  /** IANA time zone from the person's profile, when the adapter knows it (what "at 9:00" means to them). */
  timezone?: string;
  /**
   * The workspace the user belongs to, when it is not the conversation's (a guest of a Slack Connect channel):
   * platforms address such a user with their own team.
   */
  team?: string;
  /**
   * The platform the id belongs to, when it is not the conversation's: a task an API key made for a Slack
   * channel runs as that key, compared as that key (its approvals, its allowlist, its rate limit).
   */
  platform?: Platform;
}

/**
 * A user with the platform their id belongs to. Ids are unique only within a platform: an API key named
 * `U0ALICE` is not Slack's `U0ALICE`, so authority always compares both, as people (`people.ts`: one person
 * may have an identity on each platform).
 */
export interface Person extends Omit<ChatUser, 'platform'> {
  platform: Platform;
}

/** The user as a person of `platform` (where the id came from), unless the user names a platform of its own. */
export function onPlatform(user: ChatUser, platform: Platform): Person {
  return { ...user, platform: user.platform ?? platform };
}

/** One earlier message of a thread, given as context when a conversation starts inside it. */
export interface ThreadContextMessage {
  user: string;
  text: string;
  fromButler: boolean;
  /** Files on that message: the core fetches them like the message's own (not Butler's own files). */
  files?: InboundFile[];
}

export interface InboundMessage {
  kind: 'message';
  address: ConversationAddress;
  /** Platform id of this message (Slack `ts`, Feishu `message_id`): reply anchor and status target. */
  messageId: string;
  /** Platform event id, for logs and traces. */
  eventId: string;
  /**
   * Identifies this message however often and by whichever event it is delivered
   * (Slack `channel:ts`, Feishu `message_id`). Unique per platform in the inbox.
   */
  dedupKey: string;
  user: ChatUser;
  /** Cleaned text: the bot's own mention removed, other mentions resolved to names. */
  text: string;
  isMention: boolean;
  isDirect: boolean;
  /** When the platform says the message was sent (ISO 8601). */
  sentAt: string;
  /**
   * The message forwards a chat history that the adapter reads in `prepare`, off the acknowledgement path
   * (Feishu `merge_forward`); until then `text` says only that a history was forwarded.
   */
  forwardsHistory?: true;
  /** Set when the intake cut `text` to its length limit: how many characters the message had. */
  cutFrom?: number;
  /** Files and images on the message; the worker fetches them before the turn (`ChatAdapter.fetchFile`). */
  files?: InboundFile[];
  /**
   * Set when no person sent this message: a scheduled task's run, with its prompt as `text` and its creator
   * as `user`. `messageId` is then Butler's own id for the run; the reply goes under `anchor` when set.
   */
  schedule?: { id: string; slot: string; anchor?: string; name?: string };
  /**
   * A credential the platform gave for this message alone (Slack's `action_token`, which lets Butler search as
   * its sender). The intake seals it, bound to this message, before anything is stored (or drops it without a
   * secret key); only the turn that answers this message opens it.
   */
  grant?: string;
}

/** Decisions a click can ask for. */
export type Decision = 'approve' | 'reject' | 'approve_for_conversation';

/**
 * A click on an approval card, with the clicking user taken from the platform's signed payload: on one
 * call (`approvalId`), or "Approve all" / "Reject all" on every call of the card still pending (`batchId`;
 * approve or reject only).
 */
export type ApprovalDecisionInput = {
  platform: Platform;
  user: ChatUser;
  decision: Decision;
  reason?: string;
  /**
   * The platform message the button was clicked on, where the platform says: the decision is refused
   * unless it is the request's own card (a button value naming another request decides nothing).
   */
  cardMessageId?: string;
  /**
   * Taken away from the request's card, on a surface of the request's own platform that shows it to people
   * who may decide it (Slack's App Home): one call, approve or reject only, checked like any decision; the
   * card where it was asked then shows the outcome. Never together with `cardMessageId`.
   */
  offCard?: true;
} & ({ approvalId: string; batchId?: undefined } | { batchId: string; approvalId?: undefined });

export type AcceptResult =
  | { status: 'accepted'; eventId: number }
  /** The message asked to stop the turn running in its conversation ("stop"), and one was: it is not a turn. */
  | { status: 'stopping' }
  | { status: 'duplicate' }
  | { status: 'ignored'; reason: 'not_allowed' };
