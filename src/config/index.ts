import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { z } from 'zod';
import { ConfigError, type ConfigIssue } from '../core/contracts/errors.js';
import type { Platform } from '../core/contracts/events.js';
import {
  demoModelName,
  demoModelUrl,
  modelEndpoint,
  overrideEndpoint,
  resolveAgents,
  resolveRouting,
} from './agents.js';
import { resolveApiKeys } from './api-keys.js';
import { approvalPolicyIssues, escalationWarnings } from './approval-policy.js';
import { budgetsWithoutApprovers, unpricedBudgetModels } from './budgets.js';
import { resolveChannels } from './channel-profiles.js';
import { didYouMean } from './did-you-mean.js';
import { type Env, envSchema } from './env.js';
import { feishuApproverIssues } from './feishu-approvers.js';
import { resolveFeishuApps } from './feishu-apps.js';
import { type FileConfig, fileConfigSchema } from './file.js';
import { resolveMcpServers } from './mcp-servers.js';
import { approversByPlatform, peopleIssues } from './people.js';
import { resolveSearch } from './search.js';
import { resolveSecretKeys } from './secret-key.js';
import { slackFromEnv } from './slack-env.js';
import { slackTenantIssues } from './slack-tenants.js';
import type { AppConfig, FeishuConfig, LangfuseConfig, LoadedConfig } from './types.js';

/**
 * The only code that reads `process.env`: parses env and the config file once, checks cross-field
 * rules in one place, and returns a typed config or a ConfigError naming every bad variable.
 */

export { demoModelUrl } from './agents.js';
export type {
  AgentConfig,
  AppConfig,
  ChannelProfileConfig,
  FeishuConfig,
  LangfuseConfig,
  LoadedConfig,
  ModelEndpoint,
  RoutingConfig,
  SlackConfig,
} from './types.js';

const feishuDomains: Record<string, string> = {
  feishu: 'https://open.feishu.cn',
  lark: 'https://open.larksuite.com',
};

/** Each zod issue as a bad variable; an unknown key of `schema` says which known key it may be a typo of. */
function zodIssues(error: z.ZodError, prefix = '', schema?: z.ZodType): ConfigIssue[] {
  return error.issues.map((issue) => {
    const suggestions =
      issue.code === 'unrecognized_keys' && schema
        ? issue.keys.flatMap((key) => {
            const known = didYouMean(schema, issue.path, key);
            return known ? [`"${key}": did you mean "${known}"?`] : [];
          })
        : [];
    return {
      variable: prefix + (issue.path.length > 0 ? issue.path.map(String).join('.') : '(root)'),
      message: suggestions.length > 0 ? `${issue.message} (${suggestions.join('; ')})` : issue.message,
    };
  });
}

function readConfigFile(path: string): unknown {
  const text = readFileSync(path, 'utf8');
  return path.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
}

/**
 * Replaces `${VAR}` with the variable's value; names of unset variables are collected in `missing`, and
 * the values substituted in `secrets` (when given) so they can be kept out of logs.
 */
function interpolate(text: string, env: NodeJS.ProcessEnv, missing: string[], secrets?: string[]): string {
  return text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_match, name: string) => {
    const value = env[name];
    if (value === undefined || value === '') {
      missing.push(name);
      return '';
    }
    secrets?.push(value);
    return value;
  });
}

/**
 * The platforms answering in this configuration: the terminal only when no chat platform is on; the HTTP
 * API as well when a key may chat.
 */
export function enabledPlatforms(config: Pick<AppConfig, 'slack' | 'feishu' | 'apiKeys'>): Platform[] {
  const chat: Platform[] = [
    ...(config.slack ? (['slack'] as const) : []),
    ...(config.feishu ? (['feishu'] as const) : []),
  ];
  const api: Platform[] = config.apiKeys.some((key) => key.scopes.includes('chat')) ? ['api'] : [];
  return [...(chat.length > 0 ? chat : (['console'] as const)), ...api];
}

/**
 * High-risk tools need someone who may approve them on every platform that answers (a person listed in
 * `people` approves through each of their identities).
 */
export function missingApprovers(
  file: Pick<FileConfig, 'approvers' | 'people'>,
  platforms: readonly Platform[],
  highRiskTools: readonly string[],
): ConfigIssue[] {
  if (highRiskTools.length === 0) return [];
  const approvers = approversByPlatform(file);
  return platforms
    .filter((platform) => approvers[platform].length === 0)
    .map((platform) => ({
      variable: `config file: approvers.${platform}`,
      message: `high-risk tools (${highRiskTools.join(', ')}) need at least one approver on ${platform}`,
    }));
}

/**
 * Card callbacks over a Feishu webhook are signed only with an Encrypt Key; with just a Verification Token a
 * captured click could be replayed or forged with any approver's id. Approval-gated tools then need one.
 */
function unsignedFeishuApprovals(file: FileConfig, apps: FeishuConfig[] | undefined): ConfigIssue[] {
  const unsigned = (apps ?? []).filter((app) => app.connection === 'webhook' && !app.encryptKey);
  if (unsigned.length === 0) return [];
  const gated = [
    ...file.tools.filter((tool) => tool.risk !== 'low').map((tool) => tool.name),
    ...file.mcpServers.map((server) => `${server.name}__*`),
  ];
  if (gated.length === 0) return [];
  return [
    {
      variable: 'FEISHU_ENCRYPT_KEY',
      message: `tools that need approval (${gated.join(', ')}) need signed card callbacks: set the Encrypt Key of ${unsigned.map((app) => app.appId).join(', ')}, or use the long connection`,
    },
  ];
}

function loadFile(env: Env, rawEnv: NodeJS.ProcessEnv, cwd: string, issues: ConfigIssue[]) {
  const explicit = env.BUTLER_CONFIG;
  const defaultPath = resolve(cwd, 'butler.config.yaml');
  const path = explicit ? resolve(cwd, explicit) : existsSync(defaultPath) ? defaultPath : undefined;
  if (explicit && !existsSync(resolve(cwd, explicit))) {
    issues.push({ variable: 'BUTLER_CONFIG', message: `file not found: ${explicit}` });
  }
  let raw: unknown = {};
  if (path && existsSync(path)) {
    try {
      raw = readConfigFile(path) ?? {};
    } catch (error) {
      issues.push({
        variable: 'BUTLER_CONFIG',
        message: `cannot parse ${path}: ${(error as Error).message}`,
      });
    }
  }
  const parsed = fileConfigSchema.safeParse(raw);
  if (!parsed.success) {
    issues.push(...zodIssues(parsed.error, 'config file: ', fileConfigSchema));
    return { path, file: undefined };
  }
  const file = parsed.data;
  file.tools.forEach((tool, index) => {
    const missing: string[] = [];
    tool.http.url = interpolate(tool.http.url, rawEnv, missing);
    for (const [header, value] of Object.entries(tool.http.headers)) {
      tool.http.headers[header] = interpolate(value, rawEnv, missing);
    }
    for (const name of new Set(missing)) {
      issues.push({
        variable: name,
        message: `used by tool ${tool.name} (config file: tools.${index}) but not set`,
      });
    }
    if (!URL.canParse(tool.http.url)) {
      issues.push({ variable: `config file: tools.${index}.http.url`, message: 'not a valid URL' });
    }
  });
  return { path, file };
}

export function loadConfig(rawEnv: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): LoadedConfig {
  const issues: ConfigIssue[] = [];
  const warnings: string[] = [];
  const parsedEnv = envSchema.safeParse(rawEnv);
  if (!parsedEnv.success) {
    // Report the config file's problems too, so one attempt shows every bad setting.
    const fallback = envSchema.parse({ BUTLER_CONFIG: rawEnv.BUTLER_CONFIG });
    loadFile(fallback, rawEnv, cwd, issues);
    throw new ConfigError([...zodIssues(parsedEnv.error), ...issues]);
  }
  const env = parsedEnv.data;
  const { path: configPath, file } = loadFile(env, rawEnv, cwd, issues);

  if ((env.BUTLER_BASE_URL || env.BUTLER_API_TOKEN) && !env.BUTLER_MODEL) {
    issues.push({
      variable: 'BUTLER_MODEL',
      message: 'required when BUTLER_BASE_URL or BUTLER_API_TOKEN is set',
    });
  }
  if (env.DATABASE_DIRECT_URL && !env.DATABASE_URL)
    issues.push({
      variable: 'DATABASE_DIRECT_URL',
      message: 'needs DATABASE_URL: it names the server behind the pooler DATABASE_URL points at',
    });
  // `demo` without an endpoint is Butler's scripted demo model, served by Butler itself (src/app/demo.ts).
  const demo = env.BUTLER_MODEL === demoModelName && !env.BUTLER_BASE_URL;
  const model = env.BUTLER_MODEL
    ? modelEndpoint(demo ? demoModelUrl : env.BUTLER_BASE_URL, env.BUTLER_API_TOKEN, env.BUTLER_MODEL)
    : undefined;
  if (demo) warnings.push('BUTLER_MODEL=demo: a scripted demo model answers, not an LLM');

  const compactionEndpointSet =
    env.BUTLER_CONTEXT_COMPACTION_BASE_URL || env.BUTLER_CONTEXT_COMPACTION_API_TOKEN;
  if (compactionEndpointSet && !env.BUTLER_CONTEXT_COMPACTION_MODEL) {
    issues.push({
      variable: 'BUTLER_CONTEXT_COMPACTION_MODEL',
      message: 'required when BUTLER_CONTEXT_COMPACTION_BASE_URL or _API_TOKEN is set',
    });
  }
  // A compaction model name alone means "same endpoint, cheaper model".
  const compactionModel = overrideEndpoint(
    {
      model: env.BUTLER_CONTEXT_COMPACTION_MODEL,
      baseUrl: env.BUTLER_CONTEXT_COMPACTION_BASE_URL,
      apiKey: env.BUTLER_CONTEXT_COMPACTION_API_TOKEN,
    },
    model,
  );

  const slack = slackFromEnv(env, issues);

  const fromEnv = (text: string, missing: string[], secrets: string[]) =>
    interpolate(text, rawEnv, missing, secrets);
  const feishuBaseUrl = feishuDomains[env.FEISHU_DOMAIN] ?? env.FEISHU_DOMAIN;
  if (!URL.canParse(feishuBaseUrl)) {
    issues.push({ variable: 'FEISHU_DOMAIN', message: 'must be feishu, lark or a base URL' });
  }
  const feishu = resolveFeishuApps(
    env,
    file?.feishu.apps ?? [],
    feishuBaseUrl.replace(/\/+$/, ''),
    fromEnv,
    issues,
  );
  const mcpServers = file ? resolveMcpServers(file.mcpServers, fromEnv, issues) : [];
  const oauthServers = mcpServers.filter((server) => server.oauth).map((server) => server.name);
  if (oauthServers.length > 0 && !env.BUTLER_PUBLIC_URL)
    issues.push({
      variable: 'BUTLER_PUBLIC_URL',
      message: `required by the OAuth servers (${oauthServers.join(', ')}): Connect links and the OAuth redirect URI are under it`,
    });
  for (const [index, tool] of (file?.tools ?? []).entries()) {
    const connection = tool.http.auth?.connection;
    if (connection !== undefined && !oauthServers.includes(connection))
      issues.push({
        variable: `config file: tools.${index}.http.auth.connection`,
        message: `names ${connection}, which is not an MCP server with \`oauth\``,
      });
  }
  const secretKeys = resolveSecretKeys(
    {
      text: env.BUTLER_SECRET_KEY,
      embedded: !env.DATABASE_URL,
      dataDir: env.BUTLER_DATA_DIR,
      // People's OAuth tokens, installed workspaces' bot tokens and store apps' tenant tokens are sealed with it.
      needed:
        oauthServers.length > 0 ||
        slack?.install !== undefined ||
        (feishu ?? []).some((app) => app.type === 'isv'),
      // Message search seals what it keeps (Slack's action tokens, Feishu users' tokens): on the embedded
      // database a key is made for it; with DATABASE_URL and no key, search is off (resolveSearch says so).
      wanted: slack !== undefined || feishu !== undefined,
    },
    issues,
    warnings,
  );
  const search = resolveSearch(
    {
      perMinute: file?.rateLimit.searchesPerMinute ?? 10,
      slackPrivate: file?.slack.search.private ?? true,
      slack: slack !== undefined,
      feishu,
      secretKeys,
      publicUrl: env.BUTLER_PUBLIC_URL,
      mcpServerNames: mcpServers.map((server) => server.name),
    },
    issues,
    warnings,
  );
  const apiKeys = file ? resolveApiKeys(file.api, fromEnv, issues) : [];
  const agentContext = { butlerModel: model, interpolate: fromEnv, issues };
  const agents = file ? resolveAgents(file.agents, agentContext) : [];
  const routing = file ? resolveRouting(file.routing, agents, agentContext) : { enabled: false as const };
  const channels = file
    ? resolveChannels(file.channels, { ...agentContext, agentNames: agents.map((agent) => agent.name) })
    : [];
  if (file) {
    const highRisk = file.tools.filter((tool) => tool.risk === 'high').map((tool) => tool.name);
    issues.push(...missingApprovers(file, enabledPlatforms({ slack, feishu, apiKeys }), highRisk));
    issues.push(...unsignedFeishuApprovals(file, feishu));
    const approvers = approversByPlatform(file);
    issues.push(...approvalPolicyIssues({ approvalPolicy: file.approvalPolicy, approvers }));
    issues.push(...peopleIssues(file.people, apiKeys));
    issues.push(...slackTenantIssues(file, slack));
    issues.push(...feishuApproverIssues(file));
    warnings.push(...escalationWarnings(file));
    const compacting = env.BUTLER_CONTEXT_COMPACTION_ENABLED ? compactionModel?.model : undefined;
    // Turns in a channel with its own model are priced by that model's name.
    const profileModels = file.channels.map((profile) =>
      typeof profile.model === 'string' ? profile.model : profile.model?.name,
    );
    issues.push(
      ...unpricedBudgetModels(file.budgets, file.pricing, [model?.model, compacting, ...profileModels]),
    );
    issues.push(...budgetsWithoutApprovers(file.budgets, approvers));
  }

  let langfuse: LangfuseConfig = { enabled: false };
  if (env.LANGFUSE_ENABLED) {
    if (env.LANGFUSE_PUBLIC_KEY && env.LANGFUSE_SECRET_KEY) {
      langfuse = {
        enabled: true,
        publicKey: env.LANGFUSE_PUBLIC_KEY,
        secretKey: env.LANGFUSE_SECRET_KEY,
        baseUrl: env.LANGFUSE_BASE_URL,
      };
    } else {
      const missing = ['LANGFUSE_PUBLIC_KEY', 'LANGFUSE_SECRET_KEY'].filter((name) => !rawEnv[name]);
      warnings.push(`LANGFUSE_ENABLED is true but ${missing.join(' and ')} unset: tracing stays off`);
    }
  }

  if (issues.length > 0 || !file) throw new ConfigError(issues);
  return {
    warnings,
    config: {
      port: env.PORT,
      databaseUrl: env.DATABASE_URL,
      databaseDirectUrl: env.DATABASE_DIRECT_URL,
      dataDir: env.BUTLER_DATA_DIR,
      configPath,
      publicUrl: env.BUTLER_PUBLIC_URL?.replace(/\/+$/, ''),
      model,
      compaction: {
        enabled: env.BUTLER_CONTEXT_COMPACTION_ENABLED,
        thresholdTokens: env.BUTLER_CONTEXT_COMPACTION_THRESHOLD_TOKENS,
        model: compactionModel,
      },
      slack,
      feishu,
      langfuse,
      mcpServers,
      secretKeys,
      search,
      apiKeys,
      agents,
      routing,
      channels,
      serviceName: env.OBSERVABILITY_SERVICE_NAME,
      logLevel: env.LOG_LEVEL,
      file,
    },
  };
}
