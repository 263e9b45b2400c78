import type { TokenUsage } from './observer.js';

/**
 * What the HTTP API streams about a conversation (one JSON object per event, discriminated by `type`; a turn's
 * end lists the ids of the messages it answered in `answers`). Each
 * event is stored with an increasing id, so a client that lost its stream resumes from any event
 * (`Last-Event-ID`), and a turn that finished while nobody listened can still be read.
 */
export type ConversationEvent =
  | { type: 'delta'; text: string }
  | { type: 'tool_call'; id: string; name: string; args: unknown }
  | { type: 'tool_result'; id: string; name: string; output: string; error: string | null }
  | {
      type: 'confirm_required';
      approvalId: string;
      tool: string;
      args: unknown;
      summary: string;
      risk: string;
      expiresAt: string;
      answers?: string[];
    }
  /** `scheduleId`: a scheduled run's prompt, which started the turn after it. */
  | { type: 'message'; role: 'user' | 'assistant'; content: string; scheduleId?: string }
  /**
   * A server asks the key (the turn's requester) for input mid-call; the stream ends, and the turn goes on once
   * it is answered (`POST /api/v1/inputs/{inputId}`) or its time runs out.
   */
  | {
      type: 'input_required';
      inputId: string;
      server: string;
      tool: string;
      requests: Array<{
        key: string;
        mode: 'form' | 'url';
        message: string;
        requestedSchema?: unknown;
        url?: string;
      }>;
      expiresAt: string;
      answers?: string[];
    }
  /** The turn waits until someone connects `server`; the stream ends (it goes on in a later turn). */
  | { type: 'connection_required'; server: string; expiresAt: string; answers?: string[] }
  /**
   * A link for the key's own use (a single-use Connect link to an OAuth server): open it in a browser. Stored
   * without its URL (`linkId` names it); the stream shows `url` while the link can still be used.
   */
  | { type: 'private_link'; text: string; label: string; linkId: string; expiresAt: string; url?: string }
  /** A file Butler sent into the conversation; `url` downloads it (`GET /api/v1/files/{id}`). */
  | { type: 'file'; id: string; name: string; mimeType: string; size: number; url: string }
  /** `turnId`: the turn whose reply this ends (events stored before it was added have none). */
  | { type: 'done'; usage: TokenUsage; answers?: string[]; turnId?: string }
  | { type: 'error'; error: string; answers?: string[] };

export interface StoredConversationEvent {
  id: number;
  event: ConversationEvent;
}

/**
 * Events that end what a client waits for: the turn's end, its failure, or a request for approval. With
 * `messageId`, only the end of the turn that answers that message (`answers`), or of a turn that does not
 * say which messages it answers.
 */
export const isTurnEnd = (event: ConversationEvent, messageId?: string) =>
  (event.type === 'done' ||
    event.type === 'error' ||
    event.type === 'confirm_required' ||
    event.type === 'input_required' ||
    event.type === 'connection_required') &&
  (messageId === undefined || event.answers === undefined || event.answers.includes(messageId));

export interface ConversationEventRepository {
  /** Appends in order; returns their ids. */
  append(conversationKey: string, events: readonly ConversationEvent[]): Promise<number[]>;
  /** Events after `afterId`, oldest first. */
  listAfter(conversationKey: string, afterId: number, limit: number): Promise<StoredConversationEvent[]>;
  /** The newest event's id, 0 when there is none. */
  lastId(conversationKey: string): Promise<number>;
}
