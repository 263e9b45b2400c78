import type { ChatAdapter } from '../core/contracts/adapter.js';
import type { RouteHandler } from '../http/server.js';

/**
 * What a platform integration hands to the composition root: the outbound adapter for the core,
 * the HTTP routes to mount (empty for Socket Mode / long connection), and its lifecycle.
 */
export interface PlatformConnector {
  readonly adapter: ChatAdapter;
  readonly routes: ReadonlyMap<string, RouteHandler>;
  /** Connects (Socket Mode, WebSocket) or checks credentials (auth.test, bot info). */
  start(): Promise<void>;
  stop(): Promise<void>;
  /** `ok` when ready to take events, else a short reason for /readyz. */
  readiness(): string;
}
