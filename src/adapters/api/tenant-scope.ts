import { tenantPattern } from '../../config/api-keys.js';
import { workspaceKeyPrefix } from '../../core/contracts/conversation-key.js';
import type { Platform } from '../../core/contracts/events.js';
import type { Caller } from './auth.js';
import { ApiError } from './http-json.js';

/**
 * Which tenants a request reads: those its key is limited to (`api.keys[].tenants`), narrowed by a `tenant`
 * query parameter (`slack:T…`, `feishu:<tenant key>`), as the prefixes their conversations' keys start with;
 * undefined: every tenant. A tenant outside the key's is refused, never silently widened.
 */
export function tenantPrefixes(caller: Caller, query: URLSearchParams): string[] | undefined {
  const asked = query.get('tenant');
  if (asked === null) return caller.tenants?.map(prefixOf);
  if (!tenantPattern.test(asked))
    throw new ApiError(400, 'invalid_query', 'tenant: slack:T… (or E…) or feishu:<tenant key>');
  if (caller.tenants && !caller.tenants.includes(asked))
    throw new ApiError(403, 'forbidden', `The key ${caller.name} is not limited to ${asked}.`);
  return [prefixOf(asked)];
}

/** Whether a conversation is among `prefixes` (undefined: every tenant). */
export function inTenants(prefixes: readonly string[] | undefined, conversationKey: string): boolean {
  return prefixes === undefined || prefixes.some((prefix) => conversationKey.startsWith(prefix));
}

function prefixOf(tenant: string): string {
  const [, platform = '', workspace = ''] = tenantPattern.exec(tenant) ?? [];
  return workspaceKeyPrefix(platform as Platform, workspace);
}
