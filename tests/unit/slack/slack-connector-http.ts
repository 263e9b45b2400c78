import type { PlatformConnector } from '../../../src/adapters/connector.js';
import { createSlackConnector, type SlackTuning } from '../../../src/adapters/slack/index.js';
import { fileConfigSchema } from '../../../src/config/file.js';
import type { ButlerIntake } from '../../../src/core/contracts/adapter.js';
import { silentLogger } from '../../../src/core/contracts/logger.js';
import { createHttpServer, type HttpServer } from '../../../src/http/server.js';
import { signingSecret } from './payloads.js';

/** How long a click waits for its decision before it is acknowledged anyway (production: 2.3 s). */
export const acknowledgeWithinMs = 400;

export interface ConnectOptions {
  now?: () => number;
  /** Default: quick test tunings (no API retries, a short click wait); `{}` keeps production's. */
  tuning?: Partial<SlackTuning>;
}

/** The Slack connector over HTTP against `apiUrl` (the fake Slack API). */
export function connectSlack(
  intake: ButlerIntake,
  apiUrl: string,
  options: ConnectOptions = {},
): PlatformConnector {
  return createSlackConnector({
    config: { botToken: 'xoxb-test', signingSecret, appToken: undefined, apiUrl, install: undefined },
    file: fileConfigSchema.parse({}),
    intake,
    logger: silentLogger,
    ...(options.now ? { now: options.now } : {}),
    tuning: options.tuning ?? { apiRetries: 0, acknowledgeWithinMs },
  });
}

/** The connector's routes on a local HTTP server, as the service mounts them; readiness is not under test. */
export async function serve(
  routes: PlatformConnector['routes'],
): Promise<{ server: HttpServer; url: string }> {
  const server = createHttpServer({
    port: 0,
    host: '127.0.0.1',
    logger: silentLogger,
    routes,
    readiness: async () => ({ ready: true, checks: {} }),
  });
  return { server, url: `http://127.0.0.1:${await server.listen()}/slack/events` };
}

export interface ServedSlack {
  connector: PlatformConnector;
  server: HttpServer;
  /** `…/slack/events` */
  url: string;
  close(): Promise<void>;
}

/** A started connector served over HTTP; `close` stops both. */
export async function serveSlack(intake: ButlerIntake, apiUrl: string): Promise<ServedSlack> {
  const connector = connectSlack(intake, apiUrl);
  await connector.start();
  const { server, url } = await serve(connector.routes);
  return {
    connector,
    server,
    url,
    async close() {
      await connector.stop();
      await server.close();
    },
  };
}
