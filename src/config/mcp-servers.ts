import { z } from 'zod';
import type { ConfigIssue } from '../core/contracts/errors.js';
import { type McpServerSettings, mcpSettingDefaults } from '../core/tools/mcp/index.js';
import { risks } from '../core/tools/tool.js';

/**
 * `mcpServers` in the config file: each entry is a stdio child (`command`) or a Streamable HTTP endpoint
 * (`url`), validated strictly, then resolved into the MCP room's settings with `${VAR}` read from the
 * environment. Every substituted value is passed on as a secret to keep out of logs.
 */

// One strict object rather than a union of two, so that a typo is reported as that key, not as "matches
// neither shape".
export const mcpServerSchema = z
  .object({
    // Tools are named `{name}__{tool}`: a double underscore in the name would make those names ambiguous.
    name: z
      .string()
      .regex(/^[a-zA-Z0-9-]+(_[a-zA-Z0-9-]+)*$/, 'letters, digits, - and single _ only')
      .max(32),
    /** stdio: a child process Butler starts and supervises. */
    command: z.string().min(1).optional(),
    args: z.array(z.string()).optional(),
    env: z.record(z.string(), z.string()).optional(),
    cwd: z.string().min(1).optional(),
    /** Streamable HTTP (falling back to the older SSE transport). */
    url: z.string().min(1).optional(),
    headers: z.record(z.string(), z.string()).optional(),
    /** The server wants OAuth 2.1 (the MCP authorization spec): whose account its calls use. */
    oauth: z
      .object({
        identity: z.enum(['person', 'shared']),
        clientId: z.string().min(1).optional(),
        clientSecret: z.string().min(1).optional(),
        scopes: z
          .array(z.string().regex(/^[\x21\x23-\x5B\x5D-\x7E]+$/, 'one scope token, no spaces'))
          .optional(),
        clientMetadataUrl: z
          .union([z.url({ protocol: /^https$/, error: 'must be an https URL' }), z.literal(false)])
          .optional(),
      })
      .strict()
      .optional(),
    timeoutMs: z.number().int().positive().max(600_000).default(mcpSettingDefaults.timeoutMs),
    connectTimeoutMs: z.number().int().positive().max(120_000).default(mcpSettingDefaults.connectTimeoutMs),
    maxResultChars: z.number().int().positive().default(mcpSettingDefaults.maxResultChars),
    maxResponseBytes: z
      .number()
      .int()
      .positive()
      .max(64 * 1_048_576)
      .default(mcpSettingDefaults.maxResponseBytes),
    trustAnnotations: z.boolean().default(mcpSettingDefaults.trustAnnotations),
    tools: z
      .object({
        include: z.array(z.string().min(1)).optional(),
        risk: z.record(z.string(), z.enum(risks)).default({}),
      })
      .strict()
      .default({ risk: {} }),
  })
  .strict()
  .check((context) => {
    const server = context.value;
    const problem = (message: string, key: string) =>
      context.issues.push({ code: 'custom', message, input: server, path: [key] });
    if ((server.command === undefined) === (server.url === undefined))
      problem('give either `command` (stdio) or `url` (Streamable HTTP)', server.command ? 'url' : 'command');
    if (server.url !== undefined)
      for (const key of ['args', 'env', 'cwd'] as const)
        if (server[key] !== undefined) problem('only for a stdio server (with `command`)', key);
    if (server.command !== undefined && server.headers !== undefined)
      problem('only for an HTTP server (with `url`)', 'headers');
    if (server.command !== undefined && server.oauth !== undefined)
      problem('only for an HTTP server (with `url`)', 'oauth');
    if (server.oauth?.clientSecret !== undefined && server.oauth.clientId === undefined)
      problem('a client secret needs its `clientId`', 'oauth');
    const authorization = Object.keys(server.headers ?? {}).some(
      (name) => name.toLowerCase() === 'authorization',
    );
    if (server.oauth !== undefined && authorization)
      problem(
        'an OAuth server gets its Authorization header from the connection, not from `headers`',
        'headers',
      );
  });

export const mcpServersSchema = z
  .array(mcpServerSchema)
  .default([])
  .check((context) => {
    const seen = new Set<string>();
    context.value.forEach((server, index) => {
      if (seen.has(server.name))
        context.issues.push({
          code: 'custom',
          message: `two MCP servers are named ${server.name}`,
          input: server.name,
          path: [index, 'name'],
        });
      seen.add(server.name);
    });
  });

export type McpServerConfig = z.infer<typeof mcpServerSchema>;

/** Replaces `${VAR}`; names of unset variables go to `missing`, substituted values to `secrets`. */
export type Interpolate = (text: string, missing: string[], secrets: string[]) => string;

/** The configured servers as the MCP room's settings, or the problems (unset variables, bad URLs). */
export function resolveMcpServers(
  servers: readonly McpServerConfig[],
  interpolate: Interpolate,
  issues: ConfigIssue[],
): McpServerSettings[] {
  return servers.map((server, index) => {
    const missing: string[] = [];
    const secrets: string[] = [];
    const value = (text: string) => interpolate(text, missing, secrets);
    const values = (record: Record<string, string>) =>
      Object.fromEntries(Object.entries(record).map(([key, text]) => [key, value(text)]));
    const transport: McpServerSettings['transport'] =
      server.command !== undefined
        ? {
            kind: 'stdio',
            command: value(server.command),
            args: (server.args ?? []).map(value),
            env: values(server.env ?? {}),
            ...(server.cwd ? { cwd: value(server.cwd) } : {}),
          }
        : { kind: 'http', url: value(server.url ?? ''), headers: values(server.headers ?? {}) };
    for (const name of new Set(missing)) {
      issues.push({
        variable: name,
        message: `used by MCP server ${server.name} (config file: mcpServers.${index}) but not set`,
      });
    }
    if (transport.kind === 'http' && !URL.canParse(transport.url)) {
      issues.push({ variable: `config file: mcpServers.${index}.url`, message: 'not a valid URL' });
    }
    const { oauth } = server;
    const clientSecret = oauth?.clientSecret === undefined ? undefined : value(oauth.clientSecret);
    return {
      name: server.name,
      transport,
      ...(oauth
        ? {
            oauth: {
              identity: oauth.identity,
              ...(oauth.clientId ? { clientId: value(oauth.clientId) } : {}),
              ...(clientSecret ? { clientSecret } : {}),
              ...(oauth.scopes ? { scopes: oauth.scopes } : {}),
              ...(oauth.clientMetadataUrl !== undefined
                ? { clientMetadataUrl: oauth.clientMetadataUrl }
                : {}),
            },
          }
        : {}),
      timeoutMs: server.timeoutMs,
      connectTimeoutMs: server.connectTimeoutMs,
      ...(server.tools.include ? { include: server.tools.include } : {}),
      risk: server.tools.risk,
      trustAnnotations: server.trustAnnotations,
      maxResultChars: server.maxResultChars,
      maxResponseBytes: server.maxResponseBytes,
      // A client secret written into the file is kept out of logs as one given by `${VAR}` is.
      secrets: clientSecret ? [...secrets, clientSecret] : secrets,
    };
  });
}
