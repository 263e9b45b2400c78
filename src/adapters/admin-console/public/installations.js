// Slack installations over OAuth ("Add to Slack", docs/slack.md "Many workspaces"): each workspace, who installed
// it, its state and the manifest scopes it did not grant. Shown above the usage chart; hidden while there is none.

import { byId, formatDate, h, say, sayFailure } from './dom.js';

export function createInstallationList(context) {
  const section = byId('installations');
  const rows = byId('installation-rows');
  const statusLine = byId('installations-status-line');
  let generation = 0;

  function row(item) {
    const missing =
      item.missingScopes.length > 0 ? `missing ${item.missingScopes.join(', ')}` : 'all granted';
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

  return {
    async load() {
      // Live events reload often: only the latest answer is shown.
      const mine = ++generation;
      try {
        const { items = [] } = await context.api.json('/installations');
        if (mine !== generation) return;
        section.hidden = items.length === 0;
        say(statusLine, '');
        rows.replaceChildren(...items.map(row));
      } catch (error) {
        if (mine !== generation) return;
        section.hidden = false;
        sayFailure(statusLine, error, context);
      }
    },
  };
}
