import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import type { ConversationMessage } from './messages.js';

/**
 * Offline token estimates (o200k_base, the GPT-4o family's encoding). Other models tokenize
 * differently; the brain corrects estimates with the ratio the model reports (`tokenScale`).
 */

/** Per-message framing the chat format adds (role, separators), per OpenAI's counting guide. */
const messageOverhead = 4;

export function countTextTokens(text: string): number {
  return text.length === 0 ? 0 : countTokens(text);
}

export function countMessageTokens(
  message: ConversationMessage | { role: 'system'; content: string },
): number {
  let tokens = messageOverhead + countTextTokens(message.content);
  if (message.role === 'user' && message.author) tokens += countTextTokens(message.author) + 1;
  if (message.role === 'assistant') {
    for (const call of message.toolCalls ?? []) {
      tokens += messageOverhead + countTextTokens(call.name) + countTextTokens(call.arguments);
    }
  }
  return tokens;
}
