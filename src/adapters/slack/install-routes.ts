import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Installation, type InstallationStore, InstallProvider } from '@slack/oauth';
import { WebClient } from '@slack/web-api';
import type { SlackInstallConfig } from '../../config/types.js';
import type { Logger } from '../../core/contracts/logger.js';
import { escapeHtml, htmlPage, paragraph } from '../../http/html-page.js';
import type { RouteHandler } from '../../http/server.js';
import { manifestBotScopes } from './manifest-scopes.js';
import { refreshContext, type StoredInstallations, tokenContext } from './sealed-installations.js';
import { errorFields, slackClientOptions } from './slack-api.js';
import { toSlackSdkLogger } from './slack-logger.js';

const slackInstallPath = '/slack/install';
const slackRedirectPath = '/slack/oauth_redirect';

/** Why an install was not kept, in words for the person who tried it. */
class InstallRefused extends Error {
  override name = 'InstallRefused';
}

export interface InstallRoutesOptions {
  install: SlackInstallConfig;
  publicUrl: string;
  apiUrl: string;
  stored: StoredInstallations;
  logger: Logger;
  /** `access.slack.workspaces`, when set: only these workspaces (or enterprises) may install Butler. */
  allowed: readonly string[] | undefined;
  /** An installation was stored (or stored again): the connector serves it from now on. */
  installed: (key: string) => Promise<void>;
}

/**
 * "Add to Slack" with Bolt's `InstallProvider` (`@slack/oauth`): `GET /slack/install` answers a page with the
 * button, whose authorize URL asks for the manifest's bot scopes with a `state` signed by SLACK_STATE_SECRET and
 * bound to this browser by a cookie; `GET /slack/oauth_redirect` finishes the install only in the browser that
 * started it, exchanges the code with `oauth.v2.access` (through SLACK_API_URL, 10 s) and stores the bot token
 * sealed (with its refresh token when the app rotates tokens). An org-wide install (Enterprise Grid) serves
 * every workspace of its organization.
 */
export function createInstallRoutes(options: InstallRoutesOptions): Map<string, RouteHandler> {
  const { stored, logger } = options;
  // Every call here is a person's browser waiting: once, within 10 s.
  const clientOptions = slackClientOptions({ apiUrl: options.apiUrl, logger, retries: 0 });
  /** `auth.revoke` with a token Butler will not keep; a failure is logged (the token then just goes unused). */
  async function revoke(token: string): Promise<void> {
    const client = new WebClient(token, clientOptions);
    await client.auth.revoke().catch((error: unknown) => {
      logger.warn({ platform: 'slack', ...errorFields(error) }, 'could not revoke a refused install’s token');
    });
  }
  const installationStore: InstallationStore = {
    async storeInstallation(installation: Installation) {
      const bot = installation.bot;
      if (!bot) throw new InstallRefused('Slack gave no bot token for this install.');
      // An org-wide install (Enterprise Grid) is keyed by its enterprise, any other by its workspace.
      const key = installation.isEnterpriseInstall ? installation.enterprise?.id : installation.team?.id;
      if (!key) throw new InstallRefused('Slack named no workspace or organization for this install.');
      // An empty list allows everyone, as for messages (access.slack.workspaces).
      if (options.allowed?.length && !options.allowed.includes(key)) {
        // The code was exchanged already: give the token back, so that Slack does not show Butler installed there.
        await revoke(bot.token);
        throw new InstallRefused(
          `Butler is not offered to this workspace (${key}): its operator lists the workspaces that may install it.`,
        );
      }
      // Token rotation on: the bot token expires (`expiresAt`, seconds) and the refresh token renews it.
      const rotating =
        bot.refreshToken !== undefined && bot.expiresAt !== undefined
          ? {
              refreshToken: stored.secrets.seal(bot.refreshToken, refreshContext(key)),
              tokenExpiresAt: new Date(bot.expiresAt * 1000),
            }
          : { refreshToken: undefined, tokenExpiresAt: undefined };
      await stored.repository.save({
        platform: 'slack',
        key,
        teamId: installation.team?.id,
        enterpriseId: installation.enterprise?.id,
        isEnterpriseInstall: installation.isEnterpriseInstall ?? false,
        botUserId: bot.userId,
        botId: bot.id,
        scopes: bot.scopes.join(' '),
        installerId: installation.user.id,
        token: stored.secrets.seal(bot.token, tokenContext(key)),
        ...rotating,
      });
      logger.info(
        { platform: 'slack', workspace: key, installer: installation.user.id },
        'Slack workspace installed',
      );
      await options.installed(key);
    },
    // Bolt's authorize never reaches the provider: the connector resolves installations itself.
    async fetchInstallation() {
      throw new Error('installations are read by the Slack connector');
    },
  };
  const provider = new InstallProvider({
    clientId: options.install.clientId,
    clientSecret: options.install.clientSecret,
    stateSecret: options.install.stateSecret,
    installationStore,
    directInstall: false,
    renderHtmlForInstallPath: (url) =>
      `<!doctype html><html lang="en"><meta charset="utf-8"><title>Add Butler to Slack</title>` +
      `<body style="font:16px system-ui;max-width:36em;margin:4em auto;padding:0 1em"><h1 style="font-size:1.3em">Add Butler to Slack</h1>` +
      `<p><a href="${escapeHtml(url)}">Add to Slack</a></p></body></html>`,
    logger: toSlackSdkLogger(logger),
    clientOptions,
    installUrlOptions: {
      scopes: [...manifestBotScopes],
      redirectUri: `${options.publicUrl}${slackRedirectPath}`,
    },
  });

  const installPage: RouteHandler = async (request, response) => {
    if (request.method !== 'GET') return htmlPage(response, 405, 'Not allowed', paragraph('Open this page.'));
    await provider.handleInstallPath(request, response);
  };

  const redirect: RouteHandler = async (request, response) => {
    if (request.method !== 'GET')
      return htmlPage(response, 405, 'Not allowed', paragraph('Only Slack sends the browser back here.'));
    await provider.handleCallback(request, response, {
      success: (_installation, _options, _request: IncomingMessage, page: ServerResponse) =>
        htmlPage(
          page,
          200,
          'Butler is installed',
          paragraph('Mention @Butler in a channel, or send it a direct message. You can close this tab.'),
        ),
      failure: (error, _options, _request: IncomingMessage, page: ServerResponse) => {
        const refused = error instanceof InstallRefused;
        logger.warn({ platform: 'slack', ...errorFields(error) }, 'Slack install not completed');
        htmlPage(
          page,
          refused ? 409 : 400,
          'Butler was not installed',
          paragraph(
            refused
              ? error.message
              : 'This install could not be completed (it may have been started in another browser, or expired). Start again from the install page.',
          ),
        );
      },
    });
  };

  return new Map([
    [slackInstallPath, installPage],
    [slackRedirectPath, redirect],
  ]);
}
