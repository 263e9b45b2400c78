import { Counter, collectDefaultMetrics, Registry } from 'prom-client';
import type { Observer } from '../core/contracts/observer.js';
import { createMetricsObserver } from './metrics-observer.js';
import { registerScrapeGauges, type ScrapeSources } from './scrape-gauges.js';

/**
 * Butler's Prometheus metrics (`GET /metrics`), on a registry of its own: several Butlers in one process
 * (tests) never share or clash. Counts only: no message text, ids, users or secrets.
 */

export type PlatformCallOutcome = 'ok' | 'rate_limited' | 'error';

export interface MetricsPage {
  contentType: string;
  body: string;
}

export interface Metrics {
  /** Hears turns, model and tool calls, approvals (behind `guardObserver`, like every observer). */
  readonly observer: Observer;
  /** One attempt at a platform's Web API, as the pacing layer saw it end. */
  platformCall(platform: string, method: string, outcome: PlatformCallOutcome): void;
  /** One reply delivered, by the way it went out (`stream`, `posted`, `updated`). */
  replyDelivered(platform: string, way: string): void;
  /** The text exposition, read now; answers even when the database does not. */
  render(): Promise<MetricsPage>;
}

export function createMetrics(sources: ScrapeSources): Metrics {
  const registry = new Registry();
  // CPU, memory, event loop lag, GC, handles: prom-client's standard names (process_*, nodejs_*).
  collectDefaultMetrics({ register: registry });
  const observer = createMetricsObserver(registry);
  registerScrapeGauges(registry, sources);
  const platformCalls = new Counter({
    name: 'butler_platform_api_calls_total',
    help: 'Slack and Feishu Web API calls by platform, method and outcome (ok, rate_limited, error); a retry is another call.',
    labelNames: ['platform', 'method', 'outcome'] as const,
    registers: [registry],
  });
  const replies = new Counter({
    name: 'butler_reply_deliveries_total',
    help: 'Replies delivered to Slack and Feishu by the way they went out: stream (native streaming), posted (whole once written, the stream budget spent), updated (posted, then edited).',
    labelNames: ['platform', 'way'] as const,
    registers: [registry],
  });
  return {
    observer,
    platformCall: (platform, method, outcome) => platformCalls.inc({ platform, method, outcome }),
    replyDelivered: (platform, way) => replies.inc({ platform, way }),
    render: async () => ({ contentType: registry.contentType, body: await registry.metrics() }),
  };
}
