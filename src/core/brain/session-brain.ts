import type { Logger } from '../contracts/logger.js';
import type { ConversationMessage, StoredMessage } from '../contracts/messages.js';
import type { TokenUsage, TurnObserver } from '../contracts/observer.js';
import type { ConversationRecord, Store } from '../contracts/store.js';
import type { PromptMessage } from '../model/model-client.js';
import { countMessageTokens, countTextTokens } from '../text/tokens.js';
import type { ModelTokens } from '../usage/pricing.js';
import type { Compactor } from './compactor.js';
import { splitForCompaction, trimToFit } from './history-window.js';
import { summaryMessage } from './prompt.js';

/**
 * The session brain: per conversation a rolling summary plus a window of recent messages. Before a
 * turn it builds the prompt (system, summary, window, new turn) and, when that would cross the
 * threshold, folds older messages into the summary. Compaction failures never block the reply:
 * the prompt is trimmed to fit instead, the failure is logged and observed, and a later turn retries.
 */

export interface SessionBrainOptions {
  enabled: boolean;
  thresholdTokens: number;
  /** Share of the threshold kept verbatim after compacting. */
  keepRecentRatio: number;
  /** Wait after a failed compaction before trying again. */
  retryAfterMs: number;
  /** When to compact; injectable so tests and benchmarks can force or forbid it. */
  shouldCompact?: (estimatedTokens: number, thresholdTokens: number) => boolean;
}

export interface PreparedPrompt {
  messages: PromptMessage[];
  /** Our (scaled) estimate of the prompt's size in tokens. */
  estimatedTokens: number;
  /** The raw offline estimate, for calibrating `tokenScale` against reported usage. */
  rawTokens: number;
  /** The history window used (after any compaction or trimming); pass it back for later steps of the turn. */
  window: StoredMessage[];
  /** What compacting cost, when this call compacted (the turn's usage counts it). */
  compaction: ModelTokens | null;
}

export interface PrepareInput {
  conversation: ConversationRecord;
  systemPrompt: string;
  /** Messages of the turn in progress: the new user messages, then tool round-trips so far. */
  pending: readonly ConversationMessage[];
  observer: TurnObserver;
  /** Compaction runs at the start of a turn only, not between tool steps. */
  allowCompaction: boolean;
  /** The history window: what the turn read when it began, or what an earlier step of it left. */
  window: StoredMessage[];
}

const sum = (messages: readonly { tokens: number }[]) =>
  messages.reduce((total, message) => total + message.tokens, 0);

export class SessionBrain {
  constructor(
    private readonly store: Store,
    private readonly compactor: Compactor | undefined,
    private readonly options: SessionBrainOptions,
    private readonly logger: Logger,
  ) {}

  async prepare(input: PrepareInput): Promise<PreparedPrompt> {
    const { conversation } = input;
    let summary = conversation.summary;
    let { window } = input;
    let compaction: ModelTokens | null = null;
    const fixedTokens =
      countTextTokens(input.systemPrompt) +
      input.pending.reduce((total, message) => total + countMessageTokens(message), 0);
    const rawSize = () =>
      fixedTokens + (summary ? countTextTokens(summaryMessage(summary)) : 0) + sum(window);
    const scaled = (tokens: number) => Math.ceil(tokens * conversation.tokenScale);
    const threshold = this.options.thresholdTokens;
    const shouldCompact = this.options.shouldCompact ?? ((tokens, limit) => tokens > limit);

    if (this.options.enabled && shouldCompact(scaled(rawSize()), threshold)) {
      const deferred = conversation.compactionRetryAt && conversation.compactionRetryAt > new Date();
      if (input.allowCompaction && !deferred && this.compactor) {
        const compacted = await this.compact(conversation, summary, window, rawSize(), input.observer);
        if (compacted) ({ summary, window, usage: compaction } = compacted);
      }
      if (scaled(rawSize()) > threshold) {
        // Still too big (compaction failed, deferred, or the recent window alone is large): send what fits.
        const budget = Math.max(0, threshold / conversation.tokenScale - (rawSize() - sum(window)));
        const trimmed = trimToFit(window, budget);
        if (trimmed.length < window.length) {
          this.logger.warn(
            { conversation: conversation.key, dropped: window.length - trimmed.length },
            'prompt trimmed to fit the compaction threshold',
          );
          window = trimmed;
        }
      }
    }

    const messages: PromptMessage[] = [{ role: 'system', content: input.systemPrompt }];
    if (summary) messages.push({ role: 'system', content: summaryMessage(summary) });
    messages.push(...window.map(stripStorage), ...input.pending);
    const rawTokens = rawSize();
    return { messages, rawTokens, estimatedTokens: scaled(rawTokens), window, compaction };
  }

  /** Moves `tokenScale` toward the model's reported prompt size (smoothed, bounded). */
  calibrate(conversation: ConversationRecord, rawTokens: number, usage: TokenUsage | undefined): number {
    if (!usage || rawTokens <= 0 || usage.promptTokens <= 0) return conversation.tokenScale;
    const observed = Math.min(4, Math.max(0.25, usage.promptTokens / rawTokens));
    return Number((conversation.tokenScale * 0.5 + observed * 0.5).toFixed(4));
  }

  private async compact(
    conversation: ConversationRecord,
    summary: string | null,
    window: StoredMessage[],
    tokensBefore: number,
    observer: TurnObserver,
  ) {
    const compactor = this.compactor;
    if (!compactor) return undefined;
    const keepTokens =
      (this.options.thresholdTokens * this.options.keepRecentRatio) / conversation.tokenScale;
    const { fold, keep } = splitForCompaction(window, keepTokens);
    const last = fold.at(-1);
    if (!last) return undefined;
    const startTime = new Date();
    try {
      const result = await compactor.summarize(summary, fold);
      const newSummary = result.content.trim();
      const summaryTokens = countTextTokens(newSummary);
      const tokensAfter =
        tokensBefore -
        sum(fold) -
        (summary ? countTextTokens(summaryMessage(summary)) : 0) +
        countTextTokens(summaryMessage(newSummary));
      await this.store.conversations.applyCompaction(conversation.id, {
        summary: newSummary,
        summaryTokens,
        foldedThroughId: last.id,
        messagesFolded: fold.length,
        tokensBefore,
        tokensAfter,
        model: compactor.model.model,
        durationMs: Date.now() - startTime.getTime(),
      });
      observer.generation({
        name: 'compaction',
        model: result.model,
        startTime: result.startTime,
        endTime: result.endTime,
        input: { messagesFolded: fold.length },
        output: newSummary,
        ...(result.usage ? { usage: result.usage } : {}),
      });
      observer.compaction({
        model: compactor.model.model,
        startTime,
        endTime: new Date(),
        tokensBefore,
        tokensAfter,
        messagesFolded: fold.length,
      });
      this.logger.info(
        { conversation: conversation.key, tokensBefore, tokensAfter, messagesFolded: fold.length },
        'conversation compacted',
      );
      const usage: ModelTokens = {
        model: compactor.model.model,
        promptTokens: result.usage?.promptTokens ?? 0,
        completionTokens: result.usage?.completionTokens ?? 0,
      };
      return { summary: newSummary, window: keep, usage };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.logger.warn(
        { conversation: conversation.key, err: message },
        'compaction failed; answering with a trimmed prompt',
      );
      observer.compaction({
        model: compactor.model.model,
        startTime,
        endTime: new Date(),
        tokensBefore,
        tokensAfter: tokensBefore,
        messagesFolded: 0,
        error: message,
      });
      await this.store.conversations
        .deferCompaction(conversation.id, new Date(Date.now() + this.options.retryAfterMs))
        .catch(() => {});
      return undefined;
    }
  }
}

function stripStorage(message: StoredMessage): ConversationMessage {
  const { id: _id, tokens: _tokens, ...rest } = message;
  return rest as ConversationMessage;
}
