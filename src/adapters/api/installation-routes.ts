import type { FeishuTenant } from '../../core/contracts/feishu-tenants.js';
import type { InstallationRecord } from '../../core/contracts/installation-records.js';
import type { Store } from '../../core/contracts/store.js';
import { sendJson } from './http-json.js';
import type { Route } from './routes.js';

/** What admins see of Slack installations over OAuth: who, what was granted, in what state. Never a token. */
function installationView(record: InstallationRecord, expectedScopes: readonly string[]) {
  const granted = record.scopes.split(/[ ,]+/).filter(Boolean);
  return {
    platform: record.platform,
    workspace: record.key,
    enterprise: record.enterpriseId ?? null,
    installer: record.installerId ?? null,
    state: record.uninstalledAt ? 'uninstalled' : record.lastError ? 'refusing its token' : 'active',
    lastError: record.lastError ?? null,
    scopes: granted,
    // What the manifest asks for that this install did not grant (an older install, before a scope was added).
    missingScopes: expectedScopes.filter((scope) => !granted.includes(scope)),
    rotatingToken: record.refreshToken !== undefined,
    installedAt: record.installedAt,
    uninstalledAt: record.uninstalledAt ?? null,
  };
}

/**
 * A Feishu tenant served by one of several apps, or by a store app: which app, and since when. Its scopes are
 * the app's (set in the developer console, not per tenant), so none are listed.
 */
function tenantView(tenant: FeishuTenant) {
  return {
    platform: 'feishu' as const,
    workspace: tenant.tenantKey,
    app: tenant.appId,
    enterprise: null,
    installer: null,
    state: tenant.uninstalledAt ? 'uninstalled' : 'active',
    lastError: null,
    scopes: [],
    missingScopes: [],
    rotatingToken: false,
    installedAt: tenant.firstSeenAt,
    uninstalledAt: tenant.uninstalledAt ?? null,
  };
}

/**
 * `GET /installations` (scope `read`): the Slack workspaces installed over OAuth, then the Feishu tenants of
 * several apps or a store app, oldest first. Never a token.
 */
export function installationRoutes(store: Store, expectedScopes: readonly string[]): Route[] {
  return [
    {
      method: 'GET',
      pattern: /^\/installations$/,
      scope: 'read',
      async handle({ response }) {
        const [records, tenants] = await Promise.all([
          store.installations.list('slack'),
          store.feishuTenants.list(),
        ]);
        sendJson(response, 200, {
          items: [
            ...records.map((record) => installationView(record, expectedScopes)),
            ...tenants.map(tenantView),
          ],
        });
      },
    },
  ];
}
