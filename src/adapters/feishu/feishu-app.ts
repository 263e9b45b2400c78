import { feishuWebhookPaths } from '../../config/feishu-apps.js';
import type { FileConfig } from '../../config/file.js';
import type { FeishuConfig } from '../../config/index.js';
import type { ButlerIntake, ChatAdapter } from '../../core/contracts/adapter.js';
import { ButlerError } from '../../core/contracts/errors.js';
import type { Logger } from '../../core/contracts/logger.js';
import type { RouteHandler } from '../../http/server.js';
import type { PlatformHooks } from '../connector.js';
import { renderApprovalCard } from './approval-card.js';
import { sendArgumentsCards } from './arguments-cards.js';
import type { FeishuBotIdentity } from './bot-identity.js';
import { createCardkitHealth } from './cardkit-health.js';
import { createFeishuChatAdapter } from './chat-adapter.js';
import { createFeishuDispatcher } from './dispatcher.js';
import { createFeishuApi } from './feishu-api.js';
import type { FeishuApi } from './feishu-api-types.js';
import { asRecord, stringField } from './fields.js';
import { createInboundHandlers } from './inbound.js';
import { createLongConnection } from './long-connection.js';
import { type SealedLarkCache, tenantTokenEntry } from './sealed-cache.js';
import type { StreamSettings } from './stream-settings.js';
import type { FeishuTenants } from './tenants.js';
import { FeishuUserNames } from './user-names.js';
import { createWebhookHandler } from './webhook.js';

/**
 * Feishu takes a card callback's answer only within 3 s (platforms.md §11) and never re-pushes it: wait up to
 * 2.3 s for a slow database to store the decision, below the HTTP server's route deadline (2.5 s).
 */
const cardAnswerWithinMilliseconds = 2_300;

export interface FeishuAppOptions {
  config: FeishuConfig;
  /** Every app Butler serves, for this one's webhook paths. */
  apps: readonly FeishuConfig[];
  file: FileConfig;
  intake: ButlerIntake;
  logger: Logger;
  now: () => number;
  streamSettings: StreamSettings;
  hooks: PlatformHooks;
  /** Which app serves which tenant; absent when Butler serves one self-built app, whose events are all its own. */
  tenants: FeishuTenants | undefined;
  /** A store app's ticket and tenant tokens, kept in Postgres. */
  storeCache: SealedLarkCache | undefined;
  /** Its conversations offer message search (`message-search.ts`). */
  searchable: boolean;
}

/** One Feishu app as Butler runs it: its calls, its inbound path, and its parts in each tenant. */
export interface FeishuApp {
  readonly appId: string;
  readonly routes: ReadonlyMap<string, RouteHandler>;
  /** The outbound adapter for conversations in `tenantKey`, with the app's (or, for a store app, the tenant's) token. */
  adapterFor(tenantKey: string): ChatAdapter;
  start(): Promise<void>;
  stop(): void;
  readiness(): string;
}

interface TenantParts {
  api: FeishuApi;
  names: FeishuUserNames;
  adapter: ChatAdapter;
}

export function createFeishuApp(options: FeishuAppOptions): FeishuApp {
  const { config, file, intake, now, hooks, tenants, storeCache } = options;
  const { shareOf } = hooks;
  const { appId } = config;
  const logger = options.logger.child({ appId });
  const storeApp = config.type === 'isv';
  const sdk = createFeishuApi({
    config,
    logger,
    onCall: hooks.onApiCall,
    ...(shareOf ? { share: () => shareOf(`feishu:${appId}`) } : {}),
    cache: storeCache,
  });
  const cardkit = createCardkitHealth();

  // A self-built app has one tenant and one token; a store app has both per tenant.
  const parts = new Map<string, TenantParts>();
  function partsIn(tenantKey: string): TenantParts {
    const key = storeApp ? tenantKey : '';
    let found = parts.get(key);
    if (!found) {
      const api = storeApp ? sdk.apiFor(tenantKey) : sdk.api;
      const names = new FeishuUserNames(api, logger, now);
      const adapter = createFeishuChatAdapter({
        api,
        logger,
        now,
        settings: options.streamSettings,
        cardkit,
        names,
        suggestedPrompts: file.feishu.suggestedPrompts,
        onDelivered: hooks.onReplyDelivered,
        ...(options.searchable ? { searchBaseUrl: config.baseUrl } : {}),
      });
      found = { api, names, adapter };
      parts.set(key, found);
    }
    return found;
  }

  let ownBot: FeishuBotIdentity | undefined;
  const tenantBots = new Map<string, Promise<FeishuBotIdentity>>();
  /** A store app's bot is asked for in each tenant the first time it is needed (a failure is asked again). */
  async function botIn(tenantKey: string): Promise<FeishuBotIdentity | undefined> {
    if (!storeApp) return ownBot;
    let bot = tenantBots.get(tenantKey);
    if (!bot) {
      bot = partsIn(tenantKey).api.botInfo();
      tenantBots.set(tenantKey, bot);
      bot.catch(() => tenantBots.delete(tenantKey));
    }
    return bot;
  }

  const handlers = createInboundHandlers({
    intake,
    logger,
    now,
    maxAgeMilliseconds: file.maxMessageAgeMinutes * 60_000,
    botIdentity: botIn,
    admit: async (tenantKey) => (tenants ? tenants.admit(tenantKey, appId) : true),
    cardAnswerWithinMilliseconds,
    updateCardLater: (tenantKey, messageId, card) =>
      partsIn(tenantKey).api.patchMessage(messageId, renderApprovalCard(card)),
    sendArguments: (tenantKey, details, cardMessageId) =>
      sendArgumentsCards(partsIn(tenantKey).api, details, cardMessageId),
    userName: (tenantKey, openId) => partsIn(tenantKey).names.get(tenantKey, openId),
  });
  const dispatcher = createFeishuDispatcher(
    handlers,
    sdk.larkLogger,
    storeCache && {
      cache: storeCache,
      async onUninstalled(data) {
        const tenantKey = stringField(asRecord(data), 'tenant_key');
        if (!tenantKey) return {};
        await storeCache.forget(tenantTokenEntry(tenantKey));
        tenantBots.delete(tenantKey);
        await tenants?.uninstalled(tenantKey, appId);
        return {};
      },
    },
  );

  const routes = new Map<string, RouteHandler>();
  if (config.connection === 'webhook') {
    const handler = createWebhookHandler({
      encryptKey: config.encryptKey,
      verificationToken: config.verificationToken,
      now,
      dispatch: dispatcher.dispatch,
      logger,
    });
    for (const path of feishuWebhookPaths(options.apps, config)) routes.set(path, handler);
  }
  const connection =
    config.connection === 'websocket' ? createLongConnection({ sdk, config, dispatcher, logger }) : undefined;

  return {
    appId,
    routes,
    adapterFor: (tenantKey) => partsIn(tenantKey).adapter,
    async start() {
      if (storeApp) {
        // The SDK asked Feishu to resend the ticket as its Client was made, if none was kept; it comes as an event.
        logger.info({ baseUrl: config.baseUrl }, 'Feishu store app ready for its tenants');
        return;
      }
      try {
        ownBot = await sdk.api.botInfo();
        logger.info(
          {
            botOpenId: ownBot.openId,
            botUserId: ownBot.userId,
            botUnionId: ownBot.unionId,
            connection: config.connection,
            baseUrl: config.baseUrl,
          },
          'Feishu bot identity loaded',
        );
      } catch (error) {
        throw new ButlerError(
          'feishu_start_failed',
          `Feishu: cannot read the bot identity of ${appId} from ${config.baseUrl}/open-apis/bot/v3/info (${(error as Error).message}). ` +
            'Check the app id and secret (FEISHU_APP_ID, FEISHU_APP_SECRET or feishu.apps), FEISHU_DOMAIN and that the app has the bot capability.',
          { cause: error },
        );
      }
      await connection?.start();
    },
    stop() {
      connection?.stop();
    },
    readiness() {
      if (!storeApp && !ownBot) return `Feishu bot identity of ${appId} not loaded`;
      return connection ? connection.readiness() : 'ok';
    },
  };
}
