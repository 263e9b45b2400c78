import type { FileConfig } from '../../config/file.js';
import type { SlackConfig } from '../../config/index.js';
import type { ButlerIntake } from '../../core/contracts/adapter.js';
import { ButlerError, ConfigError, networkReason } from '../../core/contracts/errors.js';
import type { Logger } from '../../core/contracts/logger.js';
import type { RouteHandler } from '../../http/server.js';
import type { PlatformConnector, PlatformHooks } from '../connector.js';
import { routedAdapter } from '../routed-adapter.js';
import { createBoltApp } from './bolt-app.js';
import { SlackHttpReceiver } from './http-receiver.js';
import { createInstallRoutes } from './install-routes.js';
import { InstallationGate, installationKeyOf, installationSourceOf } from './installation-source.js';
import { SlackInstallations } from './installations.js';
import { installationKeyOfIdentity } from './normalize.js';
import { defaultReplyTuning } from './reply-format.js';
import { rotationStore, type StoredInstallations } from './sealed-installations.js';
import { errorFields, SlackApiError } from './slack-api.js';
import { tokenRefusals } from './slack-api-error.js';
import { SlackSocketModeReceiver } from './socket-mode-receiver.js';
import { TokenRotation } from './token-rotation.js';
import { uninstalledKey } from './uninstall.js';
import { createSlackWorkspace, type SlackTuning, type SlackWorkspace } from './workspace.js';

export type { SlackTuning } from './workspace.js';

export const slackEventsPath = '/slack/events';

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
  /** Installs over OAuth (`config.install`): where installations are kept, sealed, and Butler's public URL. */
  installs?: { stored: StoredInstallations; publicUrl: string };
  /** Offer message search with the asker's action token (the core seals it: needs a secret key). */
  search?: boolean;
}

/**
 * Slack for Butler: over HTTP (`POST /slack/events`, signed) or, with `config.appToken`, over Socket Mode (no
 * routes). With a bot token it serves that token's workspace (`start()` checks it with auth.test); with
 * `config.install` it also serves every workspace installed over OAuth (`GET /slack/install`), each with its own
 * token. Payloads for any other workspace are acknowledged and dropped before Bolt.
 */
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
  const context = {
    search: options.search ?? false,
    intake,
    file: options.file,
    logger,
    apiUrl: config.apiUrl,
    now,
    tuning,
    hooks: options.hooks ?? {},
  };
  if (config.install && !options.installs)
    throw new ConfigError([
      { variable: 'SLACK_CLIENT_ID', message: 'installs need BUTLER_SECRET_KEY and BUTLER_PUBLIC_URL' },
    ]);
  const installs =
    config.install && options.installs ? { ...options.installs, config: config.install } : undefined;
  const stored = installs?.stored;
  const rotation = installs
    ? new TokenRotation({
        install: installs.config,
        apiUrl: config.apiUrl,
        store: rotationStore(installs.stored),
        logger,
        now,
      })
    : undefined;
  const installations = new SlackInstallations(context, stored, () => void countInstallations(), rotation);
  const fixed = config.botToken ? createSlackWorkspace(context, config.botToken) : undefined;
  let status = 'not started';
  let health = { served: 0, refused: 0 };
  let countedAt = 0;
  const countInstallations = async () => {
    countedAt = now();
    health = await installations.health().catch(() => health);
  };
  /** Other processes install and uninstall too: /readyz counts again when its figures are older than this. */
  const recountAfterMs = 10_000;

  const gate = new InstallationGate({
    serves: (key, uninstall) => installations.serves(key, { uninstall }),
    logger,
    now,
  });
  /** The installation a payload is for; the gate let it in, so it is one Butler serves. */
  async function workspaceOf(body: unknown): Promise<SlackWorkspace> {
    const key = installationKeyOf(installationSourceOf(body as Record<string, unknown>));
    const workspace = key === undefined ? undefined : await installations.forKey(key);
    if (!workspace) throw new SlackApiError('installation', 'not_installed');
    return workspace;
  }

  const routes = new Map<string, RouteHandler>();
  const pages = new Map<string, RouteHandler>();
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
  if (installs) {
    const installRoutes = createInstallRoutes({
      install: installs.config,
      publicUrl: installs.publicUrl,
      apiUrl: config.apiUrl,
      stored: installs.stored,
      allowed: options.file.access.slack?.workspaces,
      logger,
      installed: async (key) => {
        installations.forget(key);
        await intake.workspaceInstalled('slack', key);
        await countInstallations();
      },
    });
    for (const [path, page] of installRoutes) pages.set(path, page);
  }

  async function uninstalled(body: unknown, event: unknown): Promise<void> {
    const key = await uninstalledKey(body, event, (installed) => installations.botUserOf(installed));
    if (!key) return;
    const fixedIdentity = fixed?.identity();
    if (fixedIdentity && key === installationKeyOfIdentity(fixedIdentity)) {
      logger.error(
        { platform: 'slack', workspace: key },
        'Slack says Butler was removed from the workspace of SLACK_BOT_TOKEN',
      );
    }
    const deactivated = await stored?.repository.deactivate('slack', key);
    await intake.workspaceRemoved('slack', key);
    if (deactivated)
      logger.warn({ platform: 'slack', workspace: key }, 'Slack workspace uninstalled: its token is deleted');
    installations.forget(key);
    await countInstallations();
  }

  const app = createBoltApp({
    receiver,
    socketMode: socketReceiver !== undefined,
    apiUrl: config.apiUrl,
    logger,
    workspaceOf,
    uninstalled,
  });

  return {
    adapter: routedAdapter(
      'slack',
      async (workspace) => (await installations.forKey(workspace))?.adapter,
      (method, code) => new SlackApiError(method, code),
    ),
    routes,
    pages,
    async start() {
      if (fixed) {
        status = 'checking the bot token';
        const identity = await fixed.identify().catch((error: unknown) => {
          status = startFailure(error, config.apiUrl, logger);
          throw toStartError(error, config.apiUrl);
        });
        installations.serveFixed(fixed, identity);
        // A workspace whose tasks paused when Butler was removed has it back.
        await intake.workspaceInstalled('slack', installationKeyOfIdentity(identity));
        logger.info(
          {
            platform: 'slack',
            workspace: identity.teamId,
            botUserId: identity.userId,
            socketMode: !!socketReceiver,
          },
          'Slack connected',
        );
      }
      await countInstallations();
      await app.init();
      status = socketReceiver ? 'connecting to Socket Mode' : 'starting';
      await app.start();
      status = 'ok';
      if (config.install)
        logger.info({ platform: 'slack', installations: health.served }, 'Slack installs over OAuth on');
    },
    async stop() {
      status = 'stopped';
      await app.stop();
    },
    readiness() {
      if (status !== 'ok') return status;
      if (socketReceiver && socketReceiver.state !== 'connected')
        return `Socket Mode ${socketReceiver.state}`;
      if (!config.install) return 'ok';
      if (now() - countedAt > recountAfterMs) void countInstallations();
      const { served, refused } = health;
      const refusing = refused > 0 ? `, ${refused} refusing its token: install again` : '';
      return `ok (${served} installation${served === 1 ? '' : 's'}${refusing})`;
    },
  };
}

/** What /readyz says after a failed auth.test, and the log line. */
function startFailure(error: unknown, apiUrl: string, logger: Logger): string {
  logger.error({ platform: 'slack', ...errorFields(error) }, 'Slack auth.test failed');
  const slackError = error instanceof SlackApiError ? error.slackError : 'request_failed';
  return slackError === 'request_failed'
    ? `${new URL(apiUrl).host} unreachable`
    : `auth.test failed: ${slackError}`;
}

/** Nothing answered, or Slack answered: only Slack's own refusal of the token is the token's fault. */
function toStartError(error: unknown, apiUrl: string): ButlerError {
  const slackError = error instanceof SlackApiError ? error.slackError : 'request_failed';
  if (slackError === 'request_failed') {
    const host = new URL(apiUrl).host;
    return new ButlerError(
      'slack_unreachable',
      `Slack's Web API at ${host} could not be reached (${networkReason(error)}): check the network, a proxy, or SLACK_API_URL`,
      { cause: error },
    );
  }
  return new ButlerError(
    'slack_auth_failed',
    tokenRefusals.has(slackError)
      ? `Slack refused the bot token (auth.test: ${slackError}): check SLACK_BOT_TOKEN`
      : `Slack answered auth.test with ${slackError}`,
    { cause: error },
  );
}
