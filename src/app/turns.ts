import type { AppConfig } from '../config/index.js';
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
