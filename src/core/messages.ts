/** The conversation history as Butler stores it and sends it to the model. */

export interface ToolCall {
  /** Id the model gave the call; tool results refer to it. */
  id: string;
  name: string;
  /** The raw JSON text of the arguments, exactly as the model produced it. */
  arguments: string;
}

export type ConversationMessage =
  | { role: 'user'; content: string; author?: string }
  | { role: 'assistant'; content: string; toolCalls?: ToolCall[] }
  | { role: 'tool'; content: string; toolCallId: string };

/** A message as stored: with its row id and its (estimated) token count. */
export type StoredMessage = ConversationMessage & { id: number; tokens: number };
