import { z } from 'zod';
import type { ConfigIssue } from '../core/contracts/errors.js';
import { apiStreamsSchema, defaultStreamLimits } from './api-streams.js';
import type { Interpolate } from './mcp-servers.js';

/**
 * The HTTP API's keys (`api.keys` in the config file). A key's name is the identity its requests act as,
 * in conversations and for approvals (`approvers.api` lists key names); the key itself is a secret,
 * read from `${VAR}` and never logged.
 */

export const apiScopes = ['chat', 'approve', 'read'] as const;
export type ApiScope = (typeof apiScopes)[number];

export interface ApiKey {
  name: string;
  key: string;
  scopes: readonly ApiScope[];
  /**
   * The tenants (`slack:T…`, `feishu:<tenant key>`) whose data alone the key reads and decides; absent: every
   * tenant. A limited key reaches only the endpoints that narrow to tenants (api-and-console.md).
   */
  tenants?: readonly string[];
}

/** A tenant as the config names it: its platform and workspace (a Slack team or enterprise, a Feishu tenant key). */
export const tenantPattern = /^(slack|feishu):([^\s:]+)$/;

/** Shorter keys are too easy to guess; generate one with `openssl rand -hex 32`. */
const minimumKeyLength = 16;

export const apiSchema = z
  .object({
    keys: z
      .array(
        z
          .object({
            name: z.string().regex(/^[a-zA-Z0-9_.-]{1,64}$/, 'letters, digits, _ . and - only, at most 64'),
            key: z.string().min(1),
            scopes: z.array(z.enum(apiScopes)).min(1, 'give at least one of chat, approve, read'),
            tenants: z
              .array(z.string().regex(tenantPattern, 'a tenant: slack:T… (or E…) or feishu:<tenant key>'))
              .min(1)
              .optional(),
          })
          .strict(),
      )
      .superRefine((keys, context) => {
        const seen = new Map<string, number>();
        keys.forEach((key, index) => {
          const first = seen.get(key.name);
          if (first !== undefined)
            context.addIssue({
              code: 'custom',
              path: [index, 'name'],
              message: `keys ${first} and ${index} are both named ${key.name}`,
            });
          seen.set(key.name, index);
        });
      })
      .default([]),
    streams: apiStreamsSchema,
  })
  .strict()
  .default({ keys: [], streams: defaultStreamLimits });

/** The keys with `${VAR}` resolved; too-short or duplicate keys are problems named by index. */
export function resolveApiKeys(
  api: z.infer<typeof apiSchema>,
  interpolate: Interpolate,
  issues: ConfigIssue[],
): ApiKey[] {
  const resolved = api.keys.map((entry, index) => {
    const missing: string[] = [];
    const key = interpolate(entry.key, missing, []);
    for (const name of new Set(missing))
      issues.push({
        variable: name,
        message: `used by API key ${entry.name} (config file: api.keys.${index}.key) but not set`,
      });
    if (entry.tenants && entry.scopes.includes('chat'))
      issues.push({
        variable: `config file: api.keys.${index}.scopes`,
        message: `${entry.name} is limited to tenants, and cannot chat: its own conversations belong to no tenant`,
      });
    if (missing.length === 0 && key.length < minimumKeyLength)
      issues.push({
        variable: `config file: api.keys.${index}.key`,
        message: `shorter than ${minimumKeyLength} characters (try: openssl rand -hex 32)`,
      });
    return {
      name: entry.name,
      key,
      scopes: [...new Set(entry.scopes)],
      ...(entry.tenants ? { tenants: [...new Set(entry.tenants)] } : {}),
    };
  });
  resolved.forEach((entry, index) => {
    // A key whose variable is unset is empty; it was reported as such above.
    if (entry.key === '') return;
    const earlier = resolved.findIndex((other) => other.key === entry.key);
    if (earlier !== index)
      issues.push({
        variable: `config file: api.keys.${index}.key`,
        message: `the same key as api.keys.${earlier}`,
      });
  });
  return resolved;
}
