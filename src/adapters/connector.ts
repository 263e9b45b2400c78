import type { ChatAdapter } from '../core/contracts/adapter.js';
import type { FeishuSecretRepository, FeishuTenantRepository } from '../core/contracts/feishu-tenants.js';
import type { InstallationRepository } from '../core/contracts/installation-records.js';
import type { RouteHandler } from '../http/server.js';
import type { CallObserver } from './pacing/index.js';

/**
 * What a platform integration hands to the composition root: the outbound adapter for the core,
 * the HTTP routes to mount (empty for Socket Mode / long connection), and its lifecycle.
 */
export interface PlatformConnector {
  readonly adapter: ChatAdapter;
  readonly routes: ReadonlyMap<string, RouteHandler>;
  /** Pages a person's browser opens (Slack's install page and OAuth redirect): any method, under their path. */
  readonly pages?: ReadonlyMap<string, RouteHandler>;
  /** Connects (Socket Mode, WebSocket) or checks credentials (auth.test, bot info). */
  start(): Promise<void>;
  stop(): Promise<void>;
  /** `ok` when ready to take events, else a short reason for /readyz. */
  readiness(): string;
}

/**
 * How a reply went out: `stream` (the platform's native streaming: Slack's chat.startStream, Feishu's CardKit),
 * `posted` (whole once written, where the stream budget was spent), `updated` (posted early, then edited).
 */
export type ReplyDelivery = 'stream' | 'posted' | 'updated';

/** What the composition root lends each platform integration. */
export interface PlatformHooks {
  /** Hears each Web API call as the pacing layer saw it end (metrics). */
  onApiCall?: CallObserver | undefined;
  /** Hears how each reply went out (metrics). */
  onReplyDelivered?: ((way: ReplyDelivery) => void) | undefined;
  /**
   * This process's part of a budget (`slack:<team>`, `feishu:<app id>`) when several processes pace it
   * (app/pacing-shares.ts); absent: all of it.
   */
  shareOf?: ((budget: string) => number) | undefined;
  /** Where installations over OAuth are kept (Slack's "Add to Slack"). */
  installations?: InstallationRepository | undefined;
  /** Which app serves each Feishu tenant, and store apps' credentials. */
  feishu?: { tenants: FeishuTenantRepository; secrets: FeishuSecretRepository } | undefined;
}
