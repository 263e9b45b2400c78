/**
 * Searching a workspace's own messages as one person may read them (Slack's `assistant.search.context` with the
 * asker's action token, Feishu's message search with the asker's user token). The platform answers only what
 * that person may read; who else may see a result is decided by Butler (`core/search`), from `audienceOf`.
 */

/**
 * Who can read a conversation: everyone in the workspace (`public`), its members (`private`, a group DM is
 * one), one person and Butler (`direct`), or people of other organizations too (`external`: a Slack Connect
 * channel, a Feishu external group).
 */
export type Audience = 'public' | 'private' | 'direct' | 'external';

export interface SearchRequest {
  query: string;
  /** Conversation ids to search in; absent: everywhere the person may read. */
  channels?: readonly string[];
  after?: Date;
  before?: Date;
  limit: number;
  /** Whether private conversations (private channels, DMs, group DMs) may be searched at all. */
  includePrivate: boolean;
}

/** The asker's own credential for one search: never anyone else's, never the bot's alone. */
export type SearchCredential =
  /** Slack: the action token of the asker's triggering message (the bot token goes with it). */
  | { kind: 'action_token'; token: string }
  /** Feishu: the asker's own user access token. */
  | { kind: 'user_token'; token: string };

export interface SearchHit {
  conversationId: string;
  conversationName?: string;
  author: string;
  /** ISO 8601. */
  sentAt: string;
  text: string;
  permalink: string;
}

export type SearchAnswer =
  | { ok: true; hits: SearchHit[] }
  | {
      ok: false;
      /**
       * `credential`: the platform refused the asker's credential (expired, revoked); `scope`: the credential
       * lacks a permission; `failed`: anything else (rate limits included), with `detail` for the person.
       */
      refusal: 'credential' | 'scope' | 'failed';
      detail: string;
    };

export interface MessageSearch {
  search(
    workspace: string,
    request: SearchRequest,
    credential: SearchCredential,
    signal: AbortSignal,
  ): Promise<SearchAnswer>;
  /** Who can read a conversation; undefined when Butler cannot look it up (treated as private). */
  audienceOf(workspace: string, conversationId: string): Promise<Audience | undefined>;
}
