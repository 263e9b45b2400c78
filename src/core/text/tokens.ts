import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import type { ConversationMessage } from '../contracts/messages.js';

/**
 * Offline token estimates (o200k_base, the GPT-4o family's encoding). Other models tokenize
 * differently; the brain corrects estimates with the ratio the model reports (`tokenScale`).
 */

/** Per-message framing the chat format adds (role, separators), per OpenAI's counting guide. */
const messageOverhead = 4;

/**
 * Counts of long texts seen lately. Every turn counts its system prompt and its conversation's summary
 * again, and both repeat from turn to turn (the prompt changes with the minute, the summary with a
 * compaction); encoding them was about 5% of a turn's CPU. Oldest entry out first.
 */
const recentCounts = new Map<string, number>();
const rememberedFromLength = 256;
const rememberedTexts = 256;

export function countTextTokens(text: string): number {
  if (text.length < rememberedFromLength) return text.length === 0 ? 0 : countTokens(text);
  const known = recentCounts.get(text);
  if (known !== undefined) return known;
  const tokens = countTokens(text);
  if (recentCounts.size >= rememberedTexts) recentCounts.delete(recentCounts.keys().next().value as string);
  recentCounts.set(text, tokens);
  return tokens;
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
