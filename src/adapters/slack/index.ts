import type { FileConfig } from '../../config/file.js';
import type { SlackConfig } from '../../config/index.js';
import type { ButlerIntake } from '../../core/contracts/adapter.js';
import { ButlerError, ConfigError, networkReason } from '../../core/contracts/errors.js';
import type { Logger } from '../../core/contracts/logger.js';
import type { RouteHandler } from '../../http/server.js';
import type { PlatformConnector, PlatformHooks } from '../connector.js';
import { createAgentSessions } from './agent-sessions.js';
import { createAppHomeHandlers } from './app-home.js';
import { createBoltApp } from './bolt-app.js';
import { createFeedbackHandlers } from './feedback-handlers.js';
import { SlackHttpReceiver } from './http-receiver.js';
import { createInboundHandlers } from './inbound.js';
import { InstallationGate } from './installation-source.js';
import type { BotIdentity } from './normalize.js';
import { createSlackAdapter } from './outbound.js';
import { createCapabilities, defaultReplyTuning, type ReplyTuning } from './reply-format.js';
import { createSlackApi, errorFields, SlackApiError } from './slack-api.js';
import { SlackSocketModeReceiver } from './socket-mode-receiver.js';
import { createSuggestedPrompts } from './suggested-prompts.js';

export const slackEventsPath = '/slack/events';

/** Pacing and retry knobs; the defaults suit Slack's rate limits, tests shorten them. */
export interface SlackTuning extends ReplyTuning {
  apiTimeoutMs: number;
  apiRetries: number;
  minRetryDelayMs: number;
  /** How long a click waits for its decision to be stored before it is acknowledged anyway. */
  acknowledgeWithinMs: number;
  /** Pace calls to Slack's documented rate tiers; off only against a Slack stand-in (benchmarks of Butler's own work). */
  rateTiers: boolean;
}

export interface SlackConnectorOptions {
  config: SlackConfig;
  file: FileConfig;
  intake: ButlerIntake;
  logger: Logger;
  /** Milliseconds since the epoch (request-signature freshness, name cache). */
  now?: () => number;
  tuning?: Partial<SlackTuning>;
  /** Metrics, and this process's share of the workspace's budgets. */
  hooks?: PlatformHooks;
}

/**
 * Slack for Butler: over HTTP (`POST /slack/events`, signed) or, when `config.appToken` is set,
 * over Socket Mode (no routes). `start()` checks the token with auth.test before taking events.
 */
/** Slack's answers that say the bot token itself is wrong. */
const tokenErrors = new Set([
  'invalid_auth',
  'not_authed',
  'account_inactive',
  'token_revoked',
  'token_expired',
]);

export function createSlackConnector(options: SlackConnectorOptions): PlatformConnector {
  const { config, intake, logger } = options;
  const now = options.now ?? Date.now;
  const tuning: SlackTuning = {
    ...defaultReplyTuning,
    apiTimeoutMs: 10_000,
    apiRetries: 2,
    minRetryDelayMs: 1000,
    // Slack wants a click's ack within 3 s (platforms.md §3). A busy database may take seconds to store
    // a decision, and an ack sent before it is stored is lost to a crash: wait up to 2.3 s, below the
    // HTTP server's route deadline (2.5 s), leaving the rest for the network.
    acknowledgeWithinMs: 2300,
    rateTiers: true,
    ...options.tuning,
  };
  const hooks = options.hooks ?? {};
  const { shareOf } = hooks;
  const api = createSlackApi({
    token: config.botToken,
    apiUrl: config.apiUrl,
    logger,
    timeoutMs: tuning.apiTimeoutMs,
    retries: tuning.apiRetries,
    minRetryDelayMs: tuning.minRetryDelayMs,
    rateTiers: tuning.rateTiers,
    onCall: hooks.onApiCall,
    ...(shareOf ? { share: (workspace: string) => shareOf(`slack:${workspace}`) } : {}),
  });
  let identity: BotIdentity | undefined;
  let status = 'not started';
  const currentIdentity = () => identity;

  const capabilities = createCapabilities();
  const sessions = createAgentSessions({ api, capabilities, logger });
  const adapter = createSlackAdapter({
    api,
    logger,
    capabilities,
    sessions,
    tuning,
    identity: currentIdentity,
    now,
    onDelivered: hooks.onReplyDelivered,
  });
  const handlers = createInboundHandlers({
    intake,
    api,
    logger,
    identity: currentIdentity,
    answerBots: options.file.answerBots,
    acknowledgeWithinMs: tuning.acknowledgeWithinMs,
    stoppedIdle: (thread) => sessions.stoppedIdle(thread),
  });

  // One bot token is one installation: payloads for any other workspace (or enterprise) are dropped.
  const gate = new InstallationGate({
    serves: (key) => key === identity?.teamId || key === identity?.enterpriseId,
    logger,
    now,
  });
  const routes = new Map<string, RouteHandler>();
  let socketReceiver: SlackSocketModeReceiver | undefined;
  let receiver: SlackHttpReceiver | SlackSocketModeReceiver;
  if (config.appToken) {
    socketReceiver = new SlackSocketModeReceiver({
      appToken: config.appToken,
      apiUrl: config.apiUrl,
      logger,
      gate,
    });
    receiver = socketReceiver;
  } else {
    if (!config.signingSecret) {
      throw new ConfigError([{ variable: 'SLACK_SIGNING_SECRET', message: 'required for Slack over HTTP' }]);
    }
    const httpReceiver = new SlackHttpReceiver({ signingSecret: config.signingSecret, logger, now, gate });
    routes.set(slackEventsPath, httpReceiver.route);
    receiver = httpReceiver;
  }
  const app = createBoltApp({
    receiver,
    socketMode: socketReceiver !== undefined,
    botToken: config.botToken,
    apiUrl: config.apiUrl,
    logger,
    identity: currentIdentity,
    handlers,
    feedback: createFeedbackHandlers({
      intake,
      api,
      logger,
      acknowledgeWithinMs: tuning.acknowledgeWithinMs,
    }),
    suggestedPrompts: createSuggestedPrompts({ api, logger, prompts: options.file.slack.suggestedPrompts }),
    home: createAppHomeHandlers({ intake, api, logger, acknowledgeWithinMs: tuning.acknowledgeWithinMs }),
  });

  return {
    adapter,
    routes,
    async start() {
      status = 'checking the bot token';
      try {
        identity = await api.authTest();
      } catch (error) {
        logger.error({ platform: 'slack', ...errorFields(error) }, 'Slack auth.test failed');
        // Nothing answered, or Slack answered: only Slack's own refusal of the token is the token's fault.
        const slackError = error instanceof SlackApiError ? error.slackError : 'request_failed';
        if (slackError === 'request_failed') {
          const host = new URL(config.apiUrl).host;
          status = `${host} unreachable`;
          throw new ButlerError(
            'slack_unreachable',
            `Slack's Web API at ${host} could not be reached (${networkReason(error)}): check the network, a proxy, or SLACK_API_URL`,
            { cause: error },
          );
        }
        status = `auth.test failed: ${slackError}`;
        throw new ButlerError(
          'slack_auth_failed',
          tokenErrors.has(slackError)
            ? `Slack refused the bot token (auth.test: ${slackError}): check SLACK_BOT_TOKEN`
            : `Slack answered auth.test with ${slackError}`,
          { cause: error },
        );
      }
      await app.init();
      status = socketReceiver ? 'connecting to Socket Mode' : 'starting';
      await app.start();
      status = 'ok';
      logger.info(
        {
          platform: 'slack',
          workspace: identity.teamId,
          botUserId: identity.userId,
          socketMode: !!socketReceiver,
        },
        'Slack connected',
      );
    },
    async stop() {
      status = 'stopped';
      await app.stop();
    },
    readiness() {
      if (status !== 'ok') return status;
      if (socketReceiver && socketReceiver.state !== 'connected')
        return `Socket Mode ${socketReceiver.state}`;
      return 'ok';
    },
  };
}
