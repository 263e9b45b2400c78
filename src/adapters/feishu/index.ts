import type { FileConfig } from '../../config/file.js';
import type { FeishuConfig } from '../../config/index.js';
import type { ButlerIntake } from '../../core/contracts/adapter.js';
import { ButlerError } from '../../core/contracts/errors.js';
import type { Logger } from '../../core/contracts/logger.js';
import type { RouteHandler } from '../../http/server.js';
import type { PlatformConnector, PlatformHooks } from '../connector.js';
import { renderApprovalCard } from './approval-card.js';
import { sendArgumentsCards } from './arguments-cards.js';
import type { FeishuBotIdentity } from './bot-identity.js';
import { createCardkitHealth } from './cardkit-health.js';
import { createFeishuChatAdapter } from './chat-adapter.js';
import { createFeishuDispatcher } from './dispatcher.js';
import { createFeishuApi } from './feishu-api.js';
import { createInboundHandlers } from './inbound.js';
import { createLongConnection } from './long-connection.js';
import { defaultStreamSettings, type StreamSettings } from './stream-settings.js';
import { FeishuUserNames } from './user-names.js';
import { createWebhookHandler } from './webhook.js';

export interface FeishuConnectorOptions {
  config: FeishuConfig;
  file: FileConfig;
  intake: ButlerIntake;
  logger: Logger;
  /** Milliseconds since the epoch; injected so tests can move time (signature freshness, message age). */
  now?: () => number;
  /** Streaming pace and limits; tests shorten them. */
  streamSettings?: Partial<StreamSettings>;
  /** Metrics, and this process's share of the app's budgets. */
  hooks?: PlatformHooks;
}

/**
 * Feishu takes a card callback's answer only within 3 s (platforms.md §11) and never re-pushes it: wait up to
 * 2.3 s for a slow database to store the decision, below the HTTP server's route deadline (2.5 s).
 */
const cardAnswerWithinMilliseconds = 2_300;

/**
 * Feishu / Lark: webhook routes (`/feishu/events`, `/feishu/card`) or the long connection, the outbound adapter
 * (CardKit streaming, approval cards, reactions), and start-up (the bot's open_id).
 */
export function createFeishuConnector(options: FeishuConnectorOptions): PlatformConnector {
  const { config, file, intake } = options;
  const logger = options.logger.child({ platform: 'feishu' });
  const now = options.now ?? Date.now;
  const hooks = options.hooks ?? {};
  const { shareOf } = hooks;
  const sdk = createFeishuApi({
    config,
    logger,
    onCall: hooks.onApiCall,
    ...(shareOf ? { share: () => shareOf(`feishu:${config.appId}`) } : {}),
  });
  let bot: FeishuBotIdentity | undefined;
  const names = new FeishuUserNames(sdk.api, logger, now);

  const adapter = createFeishuChatAdapter({
    api: sdk.api,
    logger,
    now,
    settings: { ...defaultStreamSettings, ...options.streamSettings },
    cardkit: createCardkitHealth(),
    names,
    suggestedPrompts: file.feishu.suggestedPrompts,
    onDelivered: hooks.onReplyDelivered,
  });
  const handlers = createInboundHandlers({
    intake,
    logger,
    now,
    maxAgeMilliseconds: file.maxMessageAgeMinutes * 60_000,
    botIdentity: () => bot,
    cardAnswerWithinMilliseconds,
    updateCardLater: (messageId, card) => sdk.api.patchMessage(messageId, renderApprovalCard(card)),
    sendArguments: (details, cardMessageId) => sendArgumentsCards(sdk.api, details, cardMessageId),
    userName: (tenantKey, openId) => names.get(tenantKey, openId),
  });
  const dispatcher = createFeishuDispatcher(handlers, sdk.larkLogger);

  const routes = new Map<string, RouteHandler>();
  if (config.connection === 'webhook') {
    const handler = createWebhookHandler({
      encryptKey: config.encryptKey,
      verificationToken: config.verificationToken,
      now,
      dispatch: dispatcher.dispatch,
      logger,
    });
    routes.set('/feishu/events', handler);
    routes.set('/feishu/card', handler);
  }
  const connection =
    config.connection === 'websocket' ? createLongConnection({ sdk, config, dispatcher, logger }) : undefined;

  return {
    adapter,
    routes,
    async start() {
      try {
        bot = await sdk.api.botInfo();
        logger.info(
          {
            botOpenId: bot.openId,
            botUserId: bot.userId,
            botUnionId: bot.unionId,
            connection: config.connection,
            baseUrl: config.baseUrl,
          },
          'Feishu bot identity loaded',
        );
      } catch (error) {
        throw new ButlerError(
          'feishu_start_failed',
          `Feishu: cannot read the bot identity from ${config.baseUrl}/open-apis/bot/v3/info (${(error as Error).message}). ` +
            'Check FEISHU_APP_ID, FEISHU_APP_SECRET, FEISHU_DOMAIN and that the app has the bot capability.',
          { cause: error },
        );
      }
      await connection?.start();
    },
    async stop() {
      connection?.stop();
    },
    readiness() {
      if (!bot) return 'Feishu bot identity not loaded';
      return connection ? connection.readiness() : 'ok';
    },
  };
}
