import { z } from 'zod';
import type { ConfigIssue } from '../core/contracts/errors.js';
import { feishuAppTypes } from './env.js';
import type { Interpolate } from './mcp-servers.js';

/**
 * Feishu apps Butler serves: the one the `FEISHU_*` variables name (the one-app shorthand) and those under
 * `feishu.apps` in the config file, each a self-built app (one tenant) or a store app (`type: isv`, any number
 * of tenants). Give secrets in the file as `${VAR}`, so the file holds none.
 */

/** One of `feishuAppTypes` (env.ts). */
export type FeishuAppType = (typeof feishuAppTypes)[number];

/** One Feishu app Butler serves. */
export interface FeishuConfig {
  appId: string;
  appSecret: string;
  encryptKey: string | undefined;
  verificationToken: string | undefined;
  /** Open API base URL: https://open.feishu.cn, https://open.larksuite.com or a private deployment. */
  baseUrl: string;
  connection: 'webhook' | 'websocket';
  type: FeishuAppType;
}

const connections = ['webhook', 'websocket'] as const;

export const feishuAppsSchema = z
  .array(
    z
      .object({
        appId: z.string().regex(/^cli_[0-9a-z]+$/, 'a Feishu app id, cli_…'),
        appSecret: z.string().min(1),
        encryptKey: z.string().min(1).optional(),
        verificationToken: z.string().min(1).optional(),
        connection: z.enum(connections).default('webhook'),
        type: z.enum(feishuAppTypes).default('self_built'),
      })
      .strict(),
  )
  .default([]);

export interface FeishuEnv {
  FEISHU_APP_ID?: string | undefined;
  FEISHU_APP_SECRET?: string | undefined;
  FEISHU_ENCRYPT_KEY?: string | undefined;
  FEISHU_VERIFICATION_TOKEN?: string | undefined;
  FEISHU_CONNECTION: (typeof connections)[number];
  FEISHU_APP_TYPE: FeishuAppType;
}

/**
 * The rules every app obeys, whichever way it was given; `name(field)` names the setting in an issue. With several
 * tenants a forged event could claim a tenant for the wrong app, or uninstall one: every webhook delivery must
 * then be signed, which only the Encrypt Key does.
 */
function appIssues(app: FeishuConfig, name: (field: string) => string, manyTenants: boolean): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  if (app.connection === 'webhook' && !app.encryptKey && manyTenants)
    issues.push({
      variable: name('encryptKey'),
      message: `${app.appId} needs an Encrypt Key: with several apps or a store app, every webhook delivery must be signed`,
    });
  else if (app.connection === 'webhook' && !app.encryptKey && !app.verificationToken)
    issues.push({
      variable: name('encryptKey'),
      message: `webhook mode needs an Encrypt Key (recommended) or a Verification Token to verify requests (app ${app.appId})`,
    });
  if (app.type === 'isv' && app.connection !== 'webhook')
    issues.push({
      variable: name('connection'),
      message: `a store app (isv) takes events over the webhook only (app ${app.appId})`,
    });
  return issues;
}

const envName = (field: string) =>
  ({
    encryptKey: 'FEISHU_ENCRYPT_KEY',
    connection: 'FEISHU_CONNECTION',
  })[field] ?? `FEISHU_${field.toUpperCase()}`;

/** Every configured app, the environment's first; undefined when Feishu is off. Each problem is an issue. */
export function resolveFeishuApps(
  env: FeishuEnv,
  fileApps: z.infer<typeof feishuAppsSchema>,
  baseUrl: string,
  interpolate: Interpolate,
  issues: ConfigIssue[],
): FeishuConfig[] | undefined {
  /** Each app, and how an issue names its settings. */
  const named: Array<{ app: FeishuConfig; name: (field: string) => string }> = [];
  if (env.FEISHU_APP_ID) {
    if (!env.FEISHU_APP_SECRET)
      issues.push({ variable: 'FEISHU_APP_SECRET', message: 'required when FEISHU_APP_ID is set' });
    const app: FeishuConfig = {
      appId: env.FEISHU_APP_ID,
      appSecret: env.FEISHU_APP_SECRET ?? '',
      encryptKey: env.FEISHU_ENCRYPT_KEY,
      verificationToken: env.FEISHU_VERIFICATION_TOKEN,
      baseUrl,
      connection: env.FEISHU_CONNECTION,
      type: env.FEISHU_APP_TYPE,
    };
    named.push({ app, name: envName });
  } else if (env.FEISHU_APP_SECRET) {
    issues.push({ variable: 'FEISHU_APP_ID', message: 'required when FEISHU_APP_SECRET is set' });
  }
  for (const [index, entry] of fileApps.entries()) {
    const name = (field: string) => `config file: feishu.apps.${index}.${field}`;
    const missing: string[] = [];
    const value = (text: string | undefined) =>
      text === undefined ? undefined : interpolate(text, missing, []) || undefined;
    const app: FeishuConfig = {
      appId: entry.appId,
      appSecret: value(entry.appSecret) ?? '',
      encryptKey: value(entry.encryptKey),
      verificationToken: value(entry.verificationToken),
      baseUrl,
      connection: entry.connection,
      type: entry.type,
    };
    for (const variable of new Set(missing))
      issues.push({ variable, message: `used by ${name('*')} (app ${entry.appId}) but not set` });
    if (named.some((other) => other.app.appId === app.appId))
      issues.push({ variable: name('appId'), message: `${app.appId} is configured twice` });
    named.push({ app, name });
  }
  const apps = named.map(({ app }) => app);
  const manyTenants = apps.length > 1 || apps.some((app) => app.type === 'isv');
  for (const { app, name } of named) issues.push(...appIssues(app, name, manyTenants));
  return apps.length > 0 ? apps : undefined;
}

/**
 * Where an app's webhook events and card callbacks arrive, its events path first: the first app keeps
 * `/feishu/events` and `/feishu/card` (where it was before Butler served others), and with several apps each is
 * also under its own id (`/feishu/cli_…/events`).
 */
export function feishuWebhookPaths(apps: readonly FeishuConfig[], app: FeishuConfig): string[] {
  const own = apps.length > 1 ? [`/feishu/${app.appId}/events`, `/feishu/${app.appId}/card`] : [];
  return app === apps[0] ? ['/feishu/events', '/feishu/card', ...own] : own;
}
