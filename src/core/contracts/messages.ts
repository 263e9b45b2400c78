import type { FileMention } from './files.js';

/** The conversation history as Butler stores it and sends it to the model. */

export interface ToolCall {
  /** Id the model gave the call; tool results refer to it. */
  id: string;
  name: string;
  /** The raw JSON text of the arguments, exactly as the model produced it. */
  arguments: string;
}

export type ConversationMessage =
  | {
      role: 'user';
      content: string;
      author?: string;
      /** Files shared with it: the content names them, the model reads them while the message is recent. */
      files?: FileMention[];
    }
  | {
      role: 'assistant';
      content: string;
      toolCalls?: ToolCall[];
      /**
       * The platform messages that showed this reply, on a turn's final answer: a retried turn tells them
       * apart from messages a crashed attempt created but never recorded. Never sent to the model.
       */
      platformMessageIds?: string[];
    }
  | {
      role: 'tool';
      content: string;
      toolCallId: string;
      /** What is kept of `content` once the turn is over (`ToolOutput`): the model alone reads `content`. */
      kept?: string;
    };

/** Messages as they may be kept: a tool result the turn's model alone may read becomes what it keeps. */
export function keptMessages<M extends { role: string; content: string; kept?: string }>(
  messages: readonly M[],
): M[] {
  return messages.map((message) => {
    if (message.role !== 'tool' || message.kept === undefined) return message;
    const { kept, ...rest } = message;
    return { ...rest, content: kept } as M;
  });
}

/** Tool results as they may be kept (as `keptMessages`). */
export function keptResults<R extends { content: string; kept?: string }>(results: readonly R[]): R[] {
  return results.map((result) => {
    if (result.kept === undefined) return result;
    const { kept, ...rest } = result;
    return { ...rest, content: kept } as R;
  });
}

/** A message as stored: with its row id and its (estimated) token count. */
export type StoredMessage = ConversationMessage & { id: number; tokens: number };
