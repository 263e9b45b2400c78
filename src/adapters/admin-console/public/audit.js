// The audit log: every tool call, who decided it and how it went; filtered by tool, actor and time, in pages.

import { byId, formatNumber, h, isoFromLocal, say, sayFailure, time } from './dom.js';

const pageSize = 25;

export function createAuditPanel(context) {
  const { api } = context;
  const panel = byId('panel-audit');
  const form = byId('audit-filter');
  const rows = byId('audit-rows');
  const statusLine = byId('audit-status-line');
  const previous = byId('audit-previous');
  const next = byId('audit-next');
  const pageLabel = byId('audit-page');
  // The cursor of each page seen so far: the first page has none.
  let cursors = [undefined];
  let nextCursor = null;
  let loaded = false;
  let generation = 0;
  let reloadTimer;

  function filters() {
    const params = new URLSearchParams({ limit: String(pageSize) });
    const tool = byId('audit-tool').value.trim();
    const actor = byId('audit-actor').value.trim();
    const since = isoFromLocal(byId('audit-since').value);
    const until = isoFromLocal(byId('audit-until').value);
    if (tool) params.set('tool', tool);
    if (actor) params.set('actor', actor);
    if (since) params.set('since', since);
    if (until) params.set('until', until);
    return params;
  }

  async function load() {
    const mine = ++generation;
    const params = filters();
    const cursor = cursors.at(-1);
    if (cursor) params.set('cursor', cursor);
    rows.parentElement.setAttribute('aria-busy', 'true');
    try {
      const page = await api.json(`/audit?${params}`);
      if (mine !== generation) return;
      loaded = true;
      nextCursor = page.nextCursor;
      rows.replaceChildren(...page.items.map(row));
      if (page.items.length === 0)
        rows.append(h('tr', {}, h('td', { colspan: 9, class: 'empty' }, 'No tool calls match.')));
      previous.disabled = cursors.length <= 1;
      next.disabled = !nextCursor;
      pageLabel.textContent = `Page ${cursors.length}`;
      say(statusLine, `Showing ${page.items.length} tool call${page.items.length === 1 ? '' : 's'}.`);
    } catch (error) {
      if (mine === generation) sayFailure(statusLine, error, context);
    } finally {
      if (mine === generation) rows.parentElement.removeAttribute('aria-busy');
    }
  }

  function row(item) {
    return h(
      'tr',
      { dataset: { tool: item.toolName } },
      h('td', {}, time(item.createdAt)),
      h('td', {}, h('code', {}, item.toolName), item.agent ? ` (agent ${item.agent})` : ''),
      h('td', {}, h('span', { class: `badge risk-${item.risk}` }, item.risk)),
      h('td', {}, item.decision),
      h('td', {}, item.outcome, item.error ? h('span', { class: 'error-text' }, `: ${item.error}`) : ''),
      h('td', {}, item.actor),
      h('td', {}, item.decidedBy ?? '—'),
      h('td', { class: 'number' }, `${formatNumber(item.durationMs)} ms`),
      h('td', {}, h('code', { class: 'key' }, item.conversationKey)),
    );
  }

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    cursors = [undefined];
    void load();
  });
  // After the reset has cleared the fields.
  form.addEventListener('reset', () =>
    setTimeout(() => {
      cursors = [undefined];
      void load();
    }),
  );
  next.addEventListener('click', () => {
    if (!nextCursor) return;
    cursors.push(nextCursor);
    void load();
  });
  previous.addEventListener('click', () => {
    if (cursors.length <= 1) return;
    cursors.pop();
    void load();
  });

  /** New rows land on the first page; other pages stay as they are while someone reads them. */
  function refreshFirstPage() {
    if (!loaded || cursors.length > 1 || panel.hidden) return;
    clearTimeout(reloadTimer);
    reloadTimer = setTimeout(() => void load(), 200);
  }

  return {
    show() {
      if (!loaded) void load();
      else refreshFirstPage();
    },
    onReconnect: refreshFirstPage,
    onLiveEvent(event) {
      if (event.type === 'turn_finished' || event.type === 'approval_decided') refreshFirstPage();
    },
    close() {
      clearTimeout(reloadTimer);
    },
  };
}
