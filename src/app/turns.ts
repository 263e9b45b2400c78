import type { AppConfig } from '../config/index.js';
import type { FilesOptions } from '../core/files/index.js';
import type { WorkerOptions } from '../core/inbox/worker.js';
import type { TurnRunnerOptions } from '../core/turn/turn.js';

/** How turns run and how the worker takes them, from the config file. */

export function turnOptions(config: AppConfig): TurnRunnerOptions {
  const { file } = config;
  return {
    systemPrompt: file.systemPrompt,
    maxSteps: file.model.maxSteps,
    approvalTtlMs: file.approvalTtlMinutes * 60_000,
    memoriesInPrompt: 10,
    deliveryRetryMs: file.worker.deliveryRetrySeconds * 1000,
    workingIndicatorDelayMs: file.worker.workingIndicatorMilliseconds,
    pricing: file.pricing,
  };
}

const megabyte = 1024 * 1024;

/** What Butler reads of shared files, and how much of it the model is shown (`files:` in the config file). */
export function fileOptions(config: AppConfig): FilesOptions {
  const { files, model } = config.file;
  return {
    maxFileBytes: Math.round(files.maxFileMegabytes * megabyte),
    maxTurnBytes: Math.round(files.maxTurnMegabytes * megabyte),
    maxFilesPerTurn: files.maxFilesPerTurn,
    maxPdfPages: files.maxPdfPages,
    maxFileChars: files.maxFileCharacters,
    maxTurnChars: files.maxTurnCharacters,
    imageMaxSide: files.imageMaxPixels,
    vision: model.vision,
    readSeconds: files.readSeconds,
    promptTokens: files.promptTokens,
    imagePromptTokens: files.imagePromptTokens,
    ...(config.publicUrl ? { publicUrl: config.publicUrl } : {}),
  };
}

export function workerOptions(config: AppConfig): WorkerOptions {
  const { file } = config;
  return {
    leaseMs: file.worker.leaseSeconds * 1000,
    pollMs: file.worker.pollMilliseconds,
    concurrency: file.worker.concurrency,
    messagesPerMinute: file.rateLimit.messagesPerMinute,
    maxAttempts: 3,
    sweepMs: file.worker.sweepMilliseconds,
    inboxRetentionMs: file.worker.inboxRetentionHours * 3_600_000,
  };
}
