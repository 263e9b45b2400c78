import type { ConversationAddress, Person } from './events.js';
import type { ApprovalRecord, AuditEntry } from './repositories.js';
import type { Risk } from './tool-facts.js';

/**
 * What admins and other systems read (the HTTP API's read endpoints): newest first, in pages. A cursor is
 * opaque to callers: it names the last row of the page before.
 */

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export interface PageRequest {
  cursor?: string | undefined;
  limit: number;
}

export interface ConversationListItem {
  key: string;
  address: ConversationAddress;
  lastActivity: Date;
  promptTokens: number;
  completionTokens: number;
}

export interface ConversationDetail extends ConversationListItem {
  summary: string | null;
  /** The newest messages (compacted ones included, marked), oldest first. */
  messages: Array<{
    id: number;
    role: 'user' | 'assistant' | 'tool';
    content: string;
    author: string | null;
    /** The tools an assistant message called (name and raw arguments), in order. */
    toolCalls: Array<{ name: string; arguments: string }>;
    /** On a tool result: the call it answers. */
    toolCallId: string | null;
    compacted: boolean;
    createdAt: Date;
  }>;
  compactions: Array<{
    at: Date;
    model: string;
    tokensBefore: number;
    tokensAfter: number;
    messagesFolded: number;
  }>;
}

export type ApprovalListItem = Omit<ApprovalRecord, 'resume'>;

/** What says whether someone may decide a request now (`ButlerIntake.mayDecide`): where, for whom, its state. */
export type DecisionSubject = Pick<
  ApprovalRecord,
  'platform' | 'conversationKey' | 'requesters' | 'confirmBy' | 'risk' | 'status' | 'expiresAt' | 'pausedAt'
>;

export interface AuditListItem extends Omit<AuditEntry, 'grantId' | 'agent'> {
  id: number;
  grantId: string | null;
  agent: string | null;
  createdAt: Date;
}

/** A conversation a person wrote in lately: where, when they last wrote, and the first line of that message. */
export interface RecentConversation {
  address: ConversationAddress;
  lastMessageAt: Date;
  firstLine: string;
}

/** What Butler can do, for people to read: its tools with their risk, and its agents. */
export interface Capabilities {
  tools: Array<{ name: string; risk: Risk }>;
  agents: Array<{ name: string; description: string }>;
}

/**
 * A person's own page (Slack's App Home): the requests waiting for a decision that they may take or that
 * they asked for, newest first, with whether they may decide each; their recent conversations; what Butler
 * can do.
 */
export interface HomeView {
  approvals: Array<ApprovalListItem & { mayDecide: boolean }>;
  conversations: RecentConversation[];
  capabilities: Capabilities;
}

/** Conversation keys starting with any of these (`workspaceKeyPrefix`: a tenant's); absent: every conversation. */
export interface InTenants {
  tenants?: readonly string[] | undefined;
}

export interface ReadRepository {
  conversations(page: PageRequest & InTenants): Promise<Page<ConversationListItem>>;
  conversation(key: string, messageLimit: number): Promise<ConversationDetail | undefined>;
  approvals(
    filter: PageRequest &
      InTenants & {
        status?: ApprovalRecord['status'] | undefined;
        platform?: ApprovalRecord['platform'] | undefined;
        conversationKey?: string | undefined;
        /** Conversation keys that start with this (`channelKeyPrefix`: every thread of a channel). */
        conversationKeyPrefix?: string | undefined;
        /** Asked at or after this time. */
        since?: Date | undefined;
      },
  ): Promise<Page<ApprovalListItem>>;
  /** The conversations `person` last wrote in (within the inbox's retention), newest first. */
  /** In `workspace` only, when given: the same member id in another workspace is another person. */
  recentConversations(
    person: Pick<Person, 'platform' | 'id'>,
    limit: number,
    workspace?: string,
  ): Promise<RecentConversation[]>;
  audit(
    filter: PageRequest & {
      tool?: string | undefined;
      actor?: string | undefined;
      since?: Date | undefined;
      until?: Date | undefined;
    },
  ): Promise<Page<AuditListItem>>;
}

/** Cursor of a row in a newest-first list: its time and id. */
export function encodeCursor(at: Date, id: string | number): string {
  return Buffer.from(JSON.stringify([at.toISOString(), id])).toString('base64url');
}

export function decodeCursor(cursor: string | undefined): { at: Date; id: string | number } | undefined {
  if (!cursor) return undefined;
  try {
    const [at, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [
      string,
      string | number,
    ];
    const date = new Date(at);
    if (Number.isNaN(date.getTime()) || (typeof id !== 'string' && typeof id !== 'number')) return undefined;
    return { at: date, id };
  } catch {
    return undefined;
  }
}
