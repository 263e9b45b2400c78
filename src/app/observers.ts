import type { AppConfig } from '../config/index.js';
import type { EventBus } from '../core/contracts/event-bus.js';
import type { Logger } from '../core/contracts/logger.js';
import { noopObserver, type Observer } from '../core/contracts/observer.js';
import { combineObservers } from '../core/observe/fanout.js';
import { guardObserver } from '../core/observe/guard.js';
import { createEventsObserver } from '../observability/events-observer.js';
import type { Metrics } from '../observability/metrics.js';

/**
 * Tracing when it is on, the live event stream when the API can serve it, and metrics when they are
 * served; each behind the guard that keeps replies safe. With none, turns report to a no-op.
 */
export async function createObserver(
  config: AppConfig,
  bus: EventBus | undefined,
  metrics: Metrics | undefined,
  logger: Logger,
): Promise<Observer> {
  const observers: Observer[] = bus ? [guardObserver(createEventsObserver(bus), logger)] : [];
  if (metrics) observers.push(guardObserver(metrics.observer, logger));
  if (config.langfuse.enabled) {
    // Loaded only when tracing is on: OpenTelemetry and the Langfuse packages add about 30 MB of memory.
    const { createLangfuseObserver } = await import('../observability/langfuse-observer.js');
    const langfuse = createLangfuseObserver({
      publicKey: config.langfuse.publicKey,
      secretKey: config.langfuse.secretKey,
      baseUrl: config.langfuse.baseUrl,
      serviceName: config.serviceName,
      logger,
    });
    observers.push(guardObserver(langfuse, logger));
  }
  return observers.length > 0 ? combineObservers(...observers) : noopObserver;
}
