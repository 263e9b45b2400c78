import type { Risk } from '../tool.js';

/** How Butler reaches one MCP server: a child process over stdio, or a URL over Streamable HTTP (or SSE). */
export type McpTransportSettings =
  | {
      kind: 'stdio';
      command: string;
      args: string[];
      /** The child's whole environment besides PATH and HOME: Butler's own variables are never passed on. */
      env: Record<string, string>;
      /** Where the child starts; unset = an empty scratch directory of its own, never Butler's. */
      cwd?: string;
    }
  | { kind: 'http'; url: string; headers: Record<string, string> };

/**
 * A Streamable HTTP server behind OAuth 2.1 (the MCP authorization spec): whose account its calls use, and
 * the client Butler is there. Without a pre-registered `clientId` Butler registers itself dynamically.
 */
export interface McpOAuthSettings {
  /** `person`: each person connects their own account; `shared`: one connection an admin makes. */
  identity: 'person' | 'shared';
  clientId?: string;
  clientSecret?: string;
  /** Asked for when the server names none (its `WWW-Authenticate` and metadata come first). */
  scopes?: string[];
  /**
   * The HTTPS URL of Butler's client metadata document, used as its client id by servers that take URL client
   * ids; `false`: never (register, or use `clientId`). Butler serves its own under an https public URL.
   */
  clientMetadataUrl?: string | false;
}

/**
 * One configured MCP server, already validated and with `${VAR}` references resolved by the config loader.
 * Plain data: this module neither reads the environment nor validates.
 */
export interface McpServerSettings {
  /** Prefix of its tools' names (`{name}__{tool}`) and the name on logs, cards and status. */
  name: string;
  transport: McpTransportSettings;
  /** HTTP only: the server wants OAuth, and calls run on a person's (or the shared) connection. */
  oauth?: McpOAuthSettings;
  /** Per call. */
  timeoutMs: number;
  /** Start-up, handshake and tool listing together; also how long a call waits for a reconnect in progress. */
  connectTimeoutMs: number;
  /** MCP tool names or `*` globs (`get_*`) to offer; absent = every tool, empty = none. */
  include?: string[];
  /** Risk overrides by MCP tool name; they win over annotations. */
  risk: Record<string, Risk>;
  /** When false every tool is high risk unless overridden: annotations are hints from the server. */
  trustAnnotations: boolean;
  /** Longest result text handed to the model. */
  maxResultChars: number;
  /** HTTP only: the most bytes one message from the server may take; a longer one is not read. */
  maxResponseBytes: number;
  /**
   * Values to keep out of logs and status errors besides the env and header values (the config loader
   * passes every `${VAR}` value it substituted, e.g. a secret given in `args`).
   */
  secrets?: string[];
}

/** Defaults a config loader may apply to omitted fields. */
export const mcpSettingDefaults = {
  timeoutMs: 60_000,
  connectTimeoutMs: 15_000,
  trustAnnotations: true,
  maxResultChars: 20_000,
  maxResponseBytes: 1_048_576,
} as const;
