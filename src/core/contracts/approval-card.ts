import type { ChatUser, ConversationAddress, Platform } from './events.js';
import type { Risk, ToolOrigin } from './tool-facts.js';

export type ApprovalStatus = 'pending' | 'approved' | 'rejected' | 'expired';

/** One tool call on an approval card, with its own decision. */
export interface ApprovalCardCall {
  /** What the per-call buttons carry. */
  approvalId: string;
  status: ApprovalStatus;
  toolName: string;
  /** Where the tool comes from (an MCP server and its own name for the tool); absent for built-in tools. */
  origin?: ToolOrigin;
  /** The specialist agent whose call this is (Butler delegated to it); absent for Butler's own calls. */
  agent?: string;
  /** One line a person can read: what will happen. */
  summary: string;
  /** Tool arguments, pretty-printed JSON, cut to the card's budget (then ending in "…"). */
  argumentsJson: string;
  /** Characters (UTF-16 units) of the whole pretty-printed arguments: what a card says it left out. */
  argumentsLength: number;
  /** Whether `argumentsJson` is only the start of the arguments. */
  argumentsCut: boolean;
  risk: Risk;
  /** Who may decide, in words ("the requester or an approver", "an approver other than the requester"). */
  whoMayApprove: string;
  /** Set once decided. */
  decidedBy?: ChatUser;
  decidedAt?: Date;
  reason?: string;
  /** Approved "for this conversation": later calls of this tool there run without a card until then. */
  standingUntil?: Date;
}

/**
 * A platform-neutral description of an approval card: the calls one model step asked for that need a
 * person's decision (usually one). The core builds it; each adapter renders it (Block Kit, Feishu card
 * JSON 2.0, a terminal prompt). Buttons carry only ids: authority is the database plus the clicking user
 * from the platform's signed payload.
 */
export interface ApprovalCard {
  /** "Approve all" / "Reject all" carry it and act on every call still pending. */
  batchId: string;
  /** In the order the model asked for them. */
  calls: ApprovalCardCall[];
  /** Everyone whose message the turn answered, in the order they wrote: the card is "for" all of them. */
  requesters: readonly ChatUser[];
  /** User ids of configured approvers, for mentions on the card. */
  approverIds: readonly string[];
  expiresAt: Date;
  /** How long "Approve for this conversation" lasts; absent when standing approvals are off. */
  standingApprovalHours?: number;
  /** Where the whole request can be read: the admin console, when Butler knows its public address. */
  link?: string;
}

/** One call of a card, or every call of it: what "Show all arguments" and the console ask about. */
export type ApprovalTarget =
  | { approvalId: string; batchId?: undefined }
  | { batchId: string; approvalId?: undefined };

/**
 * A request for the whole arguments, from `platform`: only its own requests are shown (the api channel sees
 * every platform's, as it may decide them). `cardMessageId` is the message clicked: a button shows only
 * the card it is on.
 */
export type ApprovalDetailsRequest = ApprovalTarget & { platform: Platform; cardMessageId?: string };

/**
 * The calls of an approval request as the database holds them, arguments whole (`argumentsCut` is false):
 * what "Show all arguments" shows. Read again on every request, never taken from a click.
 */
export interface ApprovalDetails {
  batchId: string;
  /** The conversation the request was asked in: where a platform posts the arguments. */
  address: ConversationAddress;
  /** The call asked about, or every call of the card, in card order. */
  calls: ApprovalCardCall[];
  requesters: readonly ChatUser[];
  expiresAt: Date;
  link?: string;
}

export type { Decision } from './events.js';

/** Longest argument text a card shows; platforms cap block text at ~3000 characters. */
export const cardArgumentsLimit = 1500;

/**
 * The arguments a card shows, without the "…" that marks a cut, and how many characters of the whole come
 * after them.
 */
export function argumentsShown(
  call: Pick<ApprovalCardCall, 'argumentsJson' | 'argumentsCut' | 'argumentsLength'>,
): {
  text: string;
  more: number;
} {
  const text = call.argumentsCut ? call.argumentsJson.slice(0, -1) : call.argumentsJson;
  return { text, more: Math.max(0, call.argumentsLength - text.length) };
}

const counts = new Intl.NumberFormat('en-US');

/** "1 character", "12,345 characters". */
export function characters(count: number): string {
  return `${counts.format(count)} ${count === 1 ? 'character' : 'characters'}`;
}

/** "1 more character", "12,345 more characters": what a card says it left out of the arguments. */
export function moreCharacters(count: number): string {
  return `${counts.format(count)} more ${count === 1 ? 'character' : 'characters'}`;
}

/** A card with more calls than this shows only "Approve all" / "Reject all" for the rest. */
export const callsWithOwnButtons = 10;

/** Calls still waiting for a decision. */
export function pendingCalls(card: ApprovalCard): ApprovalCardCall[] {
  return card.calls.filter((call) => call.status === 'pending');
}

/** "the tool create_issue of the MCP server github", or the tool's own name. */
export function toolLabel(call: Pick<ApprovalCardCall, 'toolName' | 'origin'>): string {
  return call.origin?.kind === 'mcp'
    ? `${call.origin.tool} (MCP server ${call.origin.server})`
    : call.toolName;
}

function displayName(user: ChatUser): string {
  return user.name ?? user.id;
}

/** "2026-11-25 18:00 UTC": a date and time anyone can read, for platforms that cannot show a reader's own. */
export function utcDateTime(date: Date): string {
  return `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** "20 min", "8 h", "1 day", "30 days": how long a standing approval lasts. */
export function durationWords(hours: number): string {
  if (hours < 1) return `${Math.max(1, Math.round(hours * 60))} min`;
  if (hours < 48) return `${Math.round(hours * 10) / 10} h`;
  const days = Math.round((hours / 24) * 10) / 10;
  return `${days} ${days === 1 ? 'day' : 'days'}`;
}

/**
 * "Approved by Ana at 2026-11-25 12:03 UTC" / "Approved for this conversation by Ana until 2026-11-25 18:00
 * UTC" / "Rejected by Bo: not now" / "Expired": the outcome line every renderer shows for a decided call.
 * Standing approvals last up to 30 days, so times carry their date; a platform that can show them in the
 * reader's own time zone passes its own `formatDate` (Slack's `<!date>`).
 */
export function outcomeLine(
  call: ApprovalCardCall,
  formatDate: (date: Date) => string = utcDateTime,
): string | undefined {
  const who = call.decidedBy ? displayName(call.decidedBy) : 'someone';
  switch (call.status) {
    case 'pending':
      return undefined;
    case 'expired':
      return 'Expired: no decision before the deadline; nothing was run.';
    case 'approved':
      if (call.standingUntil)
        return `Approved for this conversation by ${who} until ${formatDate(call.standingUntil)}`;
      return `Approved by ${who}${call.decidedAt ? ` at ${formatDate(call.decidedAt)}` : ''}`;
    case 'rejected':
      return `Rejected by ${who}${call.reason ? `: ${call.reason}` : ''}`;
  }
}

export type DecisionFailure = 'not_found' | 'not_authorized' | 'already_decided' | 'expired';

/**
 * The answer to a click. On failure `message` is safe to show to the clicker; `card` (when present)
 * is the card's current state, for adapters that redraw it.
 */
export type DecisionResult =
  /** `message`: what the clicker should know when "Approve all" could not decide every call. */
  | { ok: true; card: ApprovalCard; message?: string }
  | { ok: false; code: DecisionFailure; message: string; card?: ApprovalCard };
