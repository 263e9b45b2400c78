// Connections: people's accounts on the OAuth servers Butler's tools act with (docs/tools-and-approvals.md, "Servers
// behind OAuth"). A key sees and ends its own; a read key everyone's, and makes a shared server's one connection.
// Connect asks for a single-use link and opens it in a new tab: the provider's sign-in happens there.

import { byId, h, say, sayFailure, time } from './dom.js';

const clock = (iso) => new Date(iso).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });

const whose = { person: "each person's own account", shared: 'one shared connection' };

export function createConnectionsPanel(context) {
  const { api } = context;
  const servers = byId('connection-servers');
  const rows = byId('connection-rows');
  const statusLine = byId('connections-status-line');
  let generation = 0;

  async function load() {
    const mine = ++generation;
    rows.parentElement.setAttribute('aria-busy', 'true');
    try {
      const listing = await api.json('/connections');
      if (mine !== generation) return;
      servers.replaceChildren(...listing.servers.map(serverRow));
      rows.replaceChildren(...listing.items.map(row));
      if (listing.items.length === 0)
        rows.append(h('tr', {}, h('td', { colspan: 6, class: 'empty' }, 'No connections yet.')));
    } catch (error) {
      if (mine === generation) sayFailure(statusLine, error, context);
    } finally {
      if (mine === generation) rows.parentElement.removeAttribute('aria-busy');
    }
  }

  async function connect(server) {
    try {
      const link = await api.json(`/connections/${encodeURIComponent(server)}/link`, { method: 'POST' });
      say(
        statusLine,
        `Opened the sign-in for ${server} in a new tab (the link works once, until ${clock(link.expiresAt)}). This list shows the connection when you come back to this tab.`,
      );
      window.open(link.url, '_blank', 'noopener,noreferrer');
    } catch (error) {
      sayFailure(statusLine, error, context);
    }
  }

  async function disconnect(item) {
    if (!confirm(`Disconnect ${item.owner} from ${item.server}? Its tokens are revoked and deleted.`)) return;
    try {
      const path = `/connections/${encodeURIComponent(item.server)}?owner=${encodeURIComponent(item.owner)}`;
      const done = await api.json(path, { method: 'DELETE' });
      say(
        statusLine,
        `Disconnected ${item.owner} from ${item.server}${done.revoked ? '; the server revoked the tokens' : ''}.`,
      );
    } catch (error) {
      sayFailure(statusLine, error, context);
    }
    await load();
  }

  function serverRow(server) {
    return h(
      'li',
      { dataset: { server: server.name } },
      h('strong', {}, server.name),
      ` · ${whose[server.identity] ?? server.identity} `,
      h(
        'button',
        { type: 'button', class: 'secondary', onclick: () => void connect(server.name) },
        'Connect',
      ),
    );
  }

  function row(item) {
    const label = `connection-${item.server}-${item.owner}`;
    const by = item.connectedBy.name
      ? `${item.connectedBy.name} (${item.connectedBy.platform})`
      : item.connectedBy.id;
    return h(
      'tr',
      { dataset: { server: item.server, owner: item.owner } },
      h('th', { scope: 'row', id: label }, item.server),
      h('td', {}, item.owner),
      h('td', {}, by),
      h('td', {}, time(item.connectedAt)),
      h('td', {}, item.scope ?? '—'),
      h(
        'td',
        {},
        h(
          'button',
          {
            type: 'button',
            class: 'secondary',
            'aria-describedby': label,
            onclick: () => void disconnect(item),
          },
          'Disconnect',
        ),
      ),
    );
  }

  // The sign-in happens in another tab: coming back to this one shows what it connected.
  let shown = false;
  window.addEventListener('focus', () => {
    if (shown && !rows.closest('[hidden]')) void load();
  });

  return {
    show() {
      shown = true;
      void load();
    },
  };
}
