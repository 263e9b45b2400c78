import type { SecretKey } from '../core/connections/secret-box.js';
import type { ProfileRule } from '../core/profiles/index.js';
import type { McpServerSettings } from '../core/tools/mcp/index.js';
import type { ApiKey } from './api-keys.js';
import type { Env } from './env.js';
import type { FeishuConfig } from './feishu-apps.js';
import type { FileConfig } from './file.js';
import type { SearchConfig } from './search.js';

export type { FeishuAppType, FeishuConfig } from './feishu-apps.js';

/** The configuration Butler runs with, as `loadConfig` returns it (split from `index.ts`, which re-exports it). */

export interface ModelEndpoint {
  baseUrl: string | undefined;
  apiKey: string;
  model: string;
}

export interface SlackConfig {
  /** One workspace's bot token; with `install`, that workspace is served as one more installation. */
  botToken: string | undefined;
  signingSecret: string | undefined;
  appToken: string | undefined;
  apiUrl: string;
  /** "Add to Slack" (OAuth v2): any number of workspaces, each with its own bot token, sealed in the database. */
  install: SlackInstallConfig | undefined;
}

export interface SlackInstallConfig {
  clientId: string;
  clientSecret: string;
  /** Signs the OAuth `state` (with a cookie binding it to the browser that started the install). */
  stateSecret: string;
}

export interface AgentConfig {
  name: string;
  description: string;
  instructions: string;
  /** Tool names or `*` globs over every tool Butler has (MCP included); empty = no tools. */
  tools: string[];
  /** The agent's own model endpoint; undefined = Butler's model. */
  endpoint: ModelEndpoint | undefined;
  maxSteps: number;
  timeoutMs: number;
}

/** A channel profile, with its model's endpoint when it names one (`${VAR}` resolved). */
export interface ChannelProfileConfig extends ProfileRule {
  endpoint: ModelEndpoint | undefined;
}

export type RoutingConfig =
  | { enabled: false }
  | { enabled: true; endpoint: ModelEndpoint | undefined; timeoutMs: number; minConfidence: number };

export type LangfuseConfig =
  | { enabled: false }
  | { enabled: true; publicKey: string; secretKey: string; baseUrl: string };

export interface AppConfig {
  port: number;
  databaseUrl: string | undefined;
  /** The Postgres server itself when `databaseUrl` is a transaction pooler: migrations and LISTEN use it. */
  databaseDirectUrl: string | undefined;
  dataDir: string;
  configPath: string | undefined;
  /**
   * Where people reach this Butler (`BUTLER_PUBLIC_URL`, no trailing slash): approval cards link to the
   * request in the admin console when it is set.
   */
  publicUrl: string | undefined;
  model: ModelEndpoint | undefined;
  compaction: {
    enabled: boolean;
    thresholdTokens: number;
    /** The dedicated compaction model; undefined = use `model`. */
    model: ModelEndpoint | undefined;
  };
  slack: SlackConfig | undefined;
  /** Every Feishu app Butler serves (the `FEISHU_*` one first); undefined when Feishu is off. */
  feishu: FeishuConfig[] | undefined;
  langfuse: LangfuseConfig;
  /** The keys that seal secrets at rest (OAuth tokens), the sealing one first; undefined when none is needed. */
  secretKeys: SecretKey[] | undefined;
  /** Where messages can be searched (`search.ts`). */
  search: SearchConfig;
  /** The HTTP API's keys, with `${VAR}` resolved (secrets: never log them). */
  apiKeys: ApiKey[];
  /** The config file's `mcpServers`, with `${VAR}` resolved. */
  mcpServers: McpServerSettings[];
  /** The config file's `agents`, with `${VAR}` resolved and endpoints filled in from Butler's. */
  agents: AgentConfig[];
  routing: RoutingConfig;
  /** The config file's `channels`: per-channel profiles, first match wins. */
  channels: ChannelProfileConfig[];
  serviceName: string;
  logLevel: Env['LOG_LEVEL'];
  file: FileConfig;
}

export interface LoadedConfig {
  config: AppConfig;
  /** Problems that turn a feature off rather than stop the service (logged once at start-up). */
  warnings: string[];
}
