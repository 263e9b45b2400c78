import type { ChatUser, ConversationAddress, Platform } from '../contracts/events.js';
import type { FileBytes } from '../contracts/files.js';
import type { InputAnswer, InputRequest, InputResponse } from '../contracts/input-needed.js';
import type { Logger } from '../contracts/logger.js';
import type { MessageSearch } from '../contracts/message-search.js';

import type { JsonSchema, Risk, ToolOrigin } from '../contracts/tool-facts.js';

export { risks } from '../contracts/tool-facts.js';
export type { JsonSchema, Risk, ToolOrigin };

export interface ToolContext {
  address: ConversationAddress;
  conversationKey: string;
  /** The person the turn answered last. */
  requester: ChatUser;
  /** Everyone whose message the turn answered (on the conversation's platform), in the order they wrote. */
  requesters: readonly ChatUser[];
  /** The platform message the turn answers, when there is one. */
  replyTo?: string;
  /** Whether the conversation is a direct chat with the requester. */
  isDirect: boolean;
  /** The scheduled task whose run made the call; absent when people's messages did. */
  scheduleId?: string;
  /** Stable for one tool call across retries and restarts: use it as an idempotency key. */
  callId: string;
  signal: AbortSignal;
  logger: Logger;
  /**
   * The opened credential the platform gave with the one message this turn answers (Slack's action token):
   * absent when the turn answers several people, continues after a wait, or the platform gave none.
   */
  grant?: string;
  /** The conversation's platform search, where it has one. */
  messageSearch?: MessageSearch;
  /** This call was made before and its server asked for input: the person's answers, for the same call again. */
  answer?: InputAnswer;
  /**
   * Asks the requester what `server` asks while the call runs (a 2025 MCP session's elicitation) and resolves with
   * their answer, or with `cancel` once `signal` aborts (the server stopped waiting, or the call ended); absent
   * where nobody can be asked (a sub-agent's call).
   */
  ask?: (server: string, request: InputRequest, signal: AbortSignal) => Promise<InputResponse>;
}

/**
 * What a tool returns: text for the model, or text and files. The files go to the conversation (sent as the
 * tool's own action, under the same approval); the model is told what was sent, never given the bytes. With
 * `kept`, the text is for this turn's model alone: the history, traces and crash records keep `kept` instead
 * (a search's results, which only the asker may read, become a line saying what was searched).
 */
export type ToolOutput = string | { text: string; files: FileBytes[] } | { text: string; kept: string };

/** The text part of a tool's output. */
export const outputText = (output: ToolOutput): string => (typeof output === 'string' ? output : output.text);

export interface ToolConnection {
  server: string;
  identity: 'person' | 'shared';
}

export type ArgumentsCheck<Input> = { ok: true; value: Input } | { ok: false; error: string };

export type PersonalOwner = { ok: true; owner: ChatUser } | { ok: false; error: string };

/**
 * A tool the model may call. `parse` validates (and may default) the model's arguments before anything
 * runs; `execute` returns text (and files) for the model. Throwing from `execute` reports an error to the model.
 */
export interface Tool<Input = unknown> {
  name: string;
  description: string;
  parameters: JsonSchema;
  risk: Risk;
  /** Absent for built-in tools. */
  origin?: ToolOrigin;
  /**
   * Set for tools that act with an account connected over OAuth (`core/connections`): the person who asked
   * (`person`), or the one connection an admin made (`shared`). Such a call waits until its account is connected.
   */
  connection?: ToolConnection;
  /** The platforms whose conversations are offered the tool; absent: every platform. */
  platforms?: readonly Platform[];
  parse(raw: unknown): ArgumentsCheck<Input>;
  /** One line a person can read on an approval card. */
  summarize(input: Input): string;
  /**
   * Set by tools that write one person's own data (a memory): whose it is, from the call and the people
   * the turn answers, or why the call cannot say. Such a call needs that person's own confirmation when
   * the model may have been steered (several people wrote, or tool output came first).
   */
  personal?(input: Input, requesters: readonly ChatUser[]): PersonalOwner;
  execute(input: Input, context: ToolContext): Promise<ToolOutput>;
}
