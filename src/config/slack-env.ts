import type { ConfigIssue } from '../core/contracts/errors.js';
import type { SlackConfig } from './types.js';

interface SlackEnv {
  SLACK_BOT_TOKEN?: string | undefined;
  SLACK_SIGNING_SECRET?: string | undefined;
  SLACK_APP_TOKEN?: string | undefined;
  SLACK_API_URL: string;
  SLACK_CLIENT_ID?: string | undefined;
  SLACK_CLIENT_SECRET?: string | undefined;
  SLACK_STATE_SECRET?: string | undefined;
  BUTLER_PUBLIC_URL?: string | undefined;
}

const installVariables = ['SLACK_CLIENT_ID', 'SLACK_CLIENT_SECRET', 'SLACK_STATE_SECRET'] as const;

/**
 * Slack from the environment: a bot token (one workspace, over HTTP or Socket Mode), or install mode (the
 * three OAuth variables: "Add to Slack" for any number of workspaces, over HTTP only), or both; undefined
 * when Slack is off. Each missing or conflicting variable is an issue of its own.
 */
export function slackFromEnv(env: SlackEnv, issues: ConfigIssue[]): SlackConfig | undefined {
  const installSet = installVariables.filter((name) => env[name] !== undefined);
  const installing = installSet.length > 0;
  for (const name of installVariables)
    if (installing && env[name] === undefined)
      issues.push({
        variable: name,
        message: `required for installs over OAuth (${installSet.join(', ')} set)`,
      });
  if (!env.SLACK_BOT_TOKEN && !installing) {
    if (env.SLACK_SIGNING_SECRET || env.SLACK_APP_TOKEN)
      issues.push({
        variable: 'SLACK_BOT_TOKEN',
        message:
          'required when SLACK_SIGNING_SECRET or SLACK_APP_TOKEN is set (or set SLACK_CLIENT_ID for installs)',
      });
    return undefined;
  }
  if (installing && env.SLACK_APP_TOKEN)
    issues.push({
      variable: 'SLACK_APP_TOKEN',
      message:
        'Socket Mode serves one workspace (an app-level token cannot be obtained by OAuth): unset it to install over OAuth',
    });
  if (!env.SLACK_SIGNING_SECRET && (installing || !env.SLACK_APP_TOKEN))
    issues.push({
      variable: 'SLACK_SIGNING_SECRET',
      message: installing
        ? 'required for installs over OAuth: Slack delivers every workspace’s events over HTTP'
        : 'required for Slack over HTTP (or set SLACK_APP_TOKEN for Socket Mode)',
    });
  if (env.SLACK_APP_TOKEN && !env.SLACK_APP_TOKEN.startsWith('xapp-'))
    issues.push({ variable: 'SLACK_APP_TOKEN', message: 'must be an app-level token (xapp-…)' });
  if (installing && !env.BUTLER_PUBLIC_URL)
    issues.push({
      variable: 'BUTLER_PUBLIC_URL',
      message: 'required for installs over OAuth: the install page and its redirect URI are under it',
    });
  const {
    SLACK_CLIENT_ID: clientId,
    SLACK_CLIENT_SECRET: clientSecret,
    SLACK_STATE_SECRET: stateSecret,
  } = env;
  return {
    botToken: env.SLACK_BOT_TOKEN,
    signingSecret: env.SLACK_SIGNING_SECRET,
    appToken: env.SLACK_APP_TOKEN,
    apiUrl: env.SLACK_API_URL,
    install: clientId && clientSecret && stateSecret ? { clientId, clientSecret, stateSecret } : undefined,
  };
}
