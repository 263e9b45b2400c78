import type { StoredMessage } from '../contracts/messages.js';
import type { ModelClient, ModelResult } from '../model/model-client.js';

/**
 * Folds older messages into the rolling summary with the compaction model. The instructions ask the
 * model to keep what a later turn cannot recover: identifiers, numbers, decisions and open asks.
 */
const instructions = `You maintain the running summary of a team-chat conversation between people and Butler, an AI assistant.
Merge the previous summary and the new messages into one updated summary that replaces both.

Keep, exactly as written:
- every identifier: ticket and incident numbers, ids, names of people, services, channels, files, URLs;
- every number, amount, date, time and version;
- decisions made, and who made them;
- tool calls Butler made and their outcomes (approved, rejected, failed, results);
- open asks: questions not yet answered, requests not yet done, promised follow-ups, pending approvals.

Drop greetings, thanks, repetition and anything later messages superseded.
Write terse bullet points under the headings "Facts", "Decisions", "Open asks" (omit an empty heading).
Write at most {limit} words. Output only the summary.`;

function transcriptLine(message: StoredMessage): string {
  switch (message.role) {
    case 'user':
      return `[${message.author ?? 'user'}] ${message.content}`;
    case 'assistant': {
      const calls = (message.toolCalls ?? []).map((call) => `→ called ${call.name}(${call.arguments})`);
      return ['[Butler]', message.content, ...calls].filter(Boolean).join(' ');
    }
    case 'tool':
      return `[tool result ${message.toolCallId}] ${message.content}`;
  }
}

export interface CompactorOptions {
  timeoutMs: number;
  /** Upper bound on the summary, in tokens (also sent as the model's output limit). */
  maxSummaryTokens: number;
}

export class Compactor {
  constructor(
    readonly model: ModelClient,
    private readonly options: CompactorOptions,
  ) {}

  /** Returns the new summary; throws (model error or timeout) without touching anything. */
  async summarize(previousSummary: string | null, messages: readonly StoredMessage[]): Promise<ModelResult> {
    const words = Math.max(60, Math.floor(this.options.maxSummaryTokens * 0.7));
    const transcript = messages.map(transcriptLine).join('\n');
    const signal = AbortSignal.timeout(this.options.timeoutMs);
    const result = await this.model.complete({
      messages: [
        { role: 'system', content: instructions.replace('{limit}', String(words)) },
        {
          role: 'user',
          content: `Previous summary:\n${previousSummary ?? '(none yet)'}\n\nNew messages:\n${transcript}`,
        },
      ],
      signal,
      maxOutputTokens: this.options.maxSummaryTokens,
    });
    if (signal.aborted) throw new Error(`compaction timed out after ${this.options.timeoutMs} ms`);
    if (result.content.trim().length === 0) throw new Error('compaction model returned an empty summary');
    return result;
  }
}
