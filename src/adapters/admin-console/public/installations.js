// Slack installations over OAuth ("Add to Slack", docs/slack.md "Many workspaces"): each workspace, who installed
// it, its state and the manifest scopes it did not grant; then Feishu tenants of several apps or a store app, with
// the app serving each. Shown above the usage chart; hidden while there is none.

import { formatDate, h } from './dom.js';
import { listSection } from './list-section.js';

export function createInstallationList(context) {
  function row(item) {
    // A Feishu tenant has its app's scopes: what it names instead is the app serving it.
    const missing = item.app
      ? `app ${item.app}`
      : item.missingScopes.length > 0
        ? `missing ${item.missingScopes.join(', ')}`
        : 'all granted';
    return h(
      'tr',
      { dataset: { workspace: item.workspace, state: item.state } },
      h('th', { scope: 'row' }, h('code', {}, item.workspace)),
      h('td', {}, item.installer ?? '—'),
      h('td', {}, item.state, item.lastError ? ` (${item.lastError})` : ''),
      h('td', {}, missing),
      h('td', {}, formatDate(item.uninstalledAt ?? item.installedAt)),
    );
  }

  return listSection(context, {
    path: '/installations',
    section: 'installations',
    rows: 'installation-rows',
    statusLine: 'installations-status-line',
    row,
  });
}
