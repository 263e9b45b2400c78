import type { FileConfig } from '../../config/file.js';
import type { FeishuConfig } from '../../config/index.js';
import type { SecretBox } from '../../core/connections/secret-box.js';
import type { ButlerIntake } from '../../core/contracts/adapter.js';
import type { FeishuSecretRepository, FeishuTenantRepository } from '../../core/contracts/feishu-tenants.js';
import type { Logger } from '../../core/contracts/logger.js';
import type { RouteHandler } from '../../http/server.js';
import type { PlatformConnector, PlatformHooks } from '../connector.js';
import { routedAdapter } from '../routed-adapter.js';
import { FeishuApiError } from './feishu-api-error.js';
import { createFeishuApp } from './feishu-app.js';
import { sealedLarkCache } from './sealed-cache.js';
import { defaultStreamSettings, type StreamSettings } from './stream-settings.js';
import { FeishuTenants } from './tenants.js';

/** Where tenants and store apps' credentials are kept, and the key that seals the credentials. */
export interface FeishuStorage {
  tenants: FeishuTenantRepository;
  secrets: FeishuSecretRepository;
  box: SecretBox | undefined;
}

export interface FeishuConnectorOptions {
  /** Every app Butler serves; the config gives at least one. */
  apps: readonly FeishuConfig[];
  file: FileConfig;
  intake: ButlerIntake;
  logger: Logger;
  /** Milliseconds since the epoch; injected so tests can move time (signature freshness, message age). */
  now?: () => number;
  /** Streaming pace and limits; tests shorten them. */
  streamSettings?: Partial<StreamSettings>;
  /** Metrics, and this process's share of each app's budgets. */
  hooks?: PlatformHooks;
  /** Needed when Butler serves several apps or a store app (the config refuses a store app without a key). */
  storage?: FeishuStorage | undefined;
  /** The app whose people search messages with their own Feishu connection (`core/search`); absent: none. */
  searchApp?: string | undefined;
}

/** Several apps, or a store app: tenants are then told apart and kept in Postgres. */
export const servesManyTenants = (apps: readonly FeishuConfig[]) =>
  apps.length > 1 || apps.some((app) => app.type === 'isv');

/**
 * Feishu / Lark: each configured app's webhook routes (`/feishu/events` and `/feishu/card`, under the app's id
 * when there are several) or long connection, and one outbound adapter that sends each conversation's calls
 * with the token of the app (and, for a store app, the tenant) it belongs to.
 */
export function createFeishuConnector(options: FeishuConnectorOptions): PlatformConnector {
  const { apps, intake, storage } = options;
  const logger = options.logger.child({ platform: 'feishu' });
  const now = options.now ?? Date.now;
  const many = servesManyTenants(apps);
  if (many && !storage) throw new Error('Feishu: several apps, or a store app, need their tenants stored');
  // /readyz counts the tenants served: again when they change here, and when its count is older than 10 s
  // (other processes take events too).
  let served = 0;
  let countedAt = Number.NEGATIVE_INFINITY;
  const count = async () => {
    countedAt = now();
    served = (await tenants?.served().catch(() => served)) ?? served;
  };
  const tenants =
    many && storage
      ? new FeishuTenants({
          repository: storage.tenants,
          intake,
          logger,
          now,
          changed: () => void count(),
        })
      : undefined;
  const storeCache = (appId: string) => {
    if (!storage?.box) throw new Error('Feishu: a store app needs BUTLER_SECRET_KEY to seal its tokens');
    return sealedLarkCache({ appId, repository: storage.secrets, secrets: storage.box, logger });
  };
  const built = apps.map((config) =>
    createFeishuApp({
      config,
      apps,
      file: options.file,
      intake,
      logger,
      now,
      streamSettings: { ...defaultStreamSettings, ...options.streamSettings },
      hooks: options.hooks ?? {},
      tenants,
      storeCache: config.type === 'isv' ? storeCache(config.appId) : undefined,
      searchable: options.searchApp === config.appId,
    }),
  );
  const [first] = built;
  const byId = new Map(built.map((app) => [app.appId, app]));
  /**
   * A tenant no app's events have named yet is the first app's: its conversations predate the other apps (the
   * first app is the one Butler served alone), and a tenant that wrote since was recorded with its app.
   */
  const appOf = async (tenantKey: string) => {
    const appId = built.length > 1 ? await tenants?.appOf(tenantKey) : undefined;
    return appId ? byId.get(appId) : first;
  };

  const routes = new Map<string, RouteHandler>(built.flatMap((app) => [...app.routes]));
  return {
    adapter: routedAdapter(
      'feishu',
      async (tenantKey) => (await appOf(tenantKey))?.adapterFor(tenantKey),
      (operation, code) => new FeishuApiError(operation, undefined, undefined, code),
    ),
    routes,
    async start() {
      for (const app of built) await app.start();
      await count();
    },
    async stop() {
      for (const app of built) app.stop();
    },
    readiness() {
      const failing = built.map((app) => app.readiness()).find((state) => state !== 'ok');
      if (failing || !tenants) return failing ?? 'ok';
      if (now() - countedAt > 10_000) void count();
      return `ok (${served} tenant${served === 1 ? '' : 's'})`;
    },
  };
}
