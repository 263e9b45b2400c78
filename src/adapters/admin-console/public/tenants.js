// The tenant picker: with several Slack workspaces or Feishu tenants, approvals, conversations and usage can be
// narrowed to one (the API's `?tenant=`). A key limited to tenants picks among its own; another key among the
// installations. Shown only when there are at least two to pick from.

import { byId } from './dom.js';

/** The reads the API narrows to a tenant. */
const narrowedReads = /^\/(approvals|conversations|usage)(\?|$)/;

/** `path` with the picked tenant, when it is one of the narrowed reads. */
export function withTenant(path, tenant) {
  if (!tenant || !narrowedReads.test(path)) return path;
  const url = new URL(path, 'http://console.invalid');
  url.searchParams.set('tenant', tenant);
  return `${url.pathname}${url.search}`;
}

/** Tenants as the API names them (`slack:T…`, `feishu:<tenant key>`) from the installations still active. */
async function installedTenants(api) {
  const { items = [] } = await api.json('/installations');
  return items
    .filter((item) => item.state !== 'uninstalled')
    .map((item) => `${item.platform}:${item.workspace}`);
}

/** Fills the picker and calls `onPick(tenant)` ('' for all) when a person picks; a failure leaves it hidden. */
export async function setUpTenantPicker(context, onPick) {
  const { api, scopes } = context;
  let tenants = scopes.tenants ?? [];
  if (!scopes.tenants && scopes.read) tenants = await installedTenants(api).catch(() => []);
  if (tenants.length < 2) return;
  const select = byId('tenant');
  for (const tenant of tenants) select.append(new Option(tenant, tenant));
  select.addEventListener('change', () => onPick(select.value));
  byId('tenant-picker').hidden = false;
}
