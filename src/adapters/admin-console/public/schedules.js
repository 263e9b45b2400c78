// Scheduled tasks: what each one runs, where and for whom, when it runs next and how its last run went, with
// Pause, Resume and Cancel. A read key sees and changes every task; another key its own.

import { byId, formatNumber, h, say, sayFailure, time } from './dom.js';

const outcomes = {
  queued: 'queued',
  replied: 'replied',
  parked: 'waiting for approval',
  stopped: 'stopped',
  failed: 'failed',
  skipped: 'skipped (missed)',
};

function where(item) {
  if (item.conversationId) return `API conversation ${item.conversationId}`;
  const { platform, workspace, channel, thread } = item.address;
  return `${platform}: ${workspace} / ${channel}${thread === 'main' ? '' : ` / ${thread}`}`;
}

const creatorOf = ({ creator }) =>
  creator.name ? `${creator.name} (${creator.platform})` : `${creator.platform}:${creator.id}`;

export function createSchedulesPanel(context) {
  const { api } = context;
  const panel = byId('panel-schedules');
  const form = byId('schedules-filter');
  const rows = byId('schedules-rows');
  const statusLine = byId('schedules-status-line');
  let loaded = false;
  let generation = 0;
  let reloadTimer;

  async function load() {
    const mine = ++generation;
    const status = byId('schedules-status').value;
    rows.parentElement.setAttribute('aria-busy', 'true');
    try {
      const { items } = await api.json(`/schedules${status ? `?status=${status}` : ''}`);
      if (mine !== generation) return;
      loaded = true;
      rows.replaceChildren(...items.map(row));
      if (items.length === 0)
        rows.append(h('tr', {}, h('td', { colspan: 8, class: 'empty' }, 'No scheduled tasks.')));
    } catch (error) {
      if (mine === generation) sayFailure(statusLine, error, context);
    } finally {
      if (mine === generation) rows.parentElement.removeAttribute('aria-busy');
    }
  }

  /** Pause, resume or cancel; the list is read again either way (someone else may have changed it). */
  async function act(item, action) {
    if (action === 'cancel' && !confirm(`Cancel the task "${item.prompt}"? It will not run again.`)) return;
    const request =
      action === 'cancel'
        ? { path: `/schedules/${item.id}`, method: 'DELETE' }
        : { path: `/schedules/${item.id}/${action}`, method: 'POST' };
    try {
      const changed = await api.json(request.path, { method: request.method });
      say(statusLine, `Task "${changed.prompt}" is ${changed.status} now.`);
    } catch (error) {
      sayFailure(statusLine, error, context);
    }
    await load();
  }

  function row(item) {
    const label = `schedule-${item.id}`;
    const button = (action, text) =>
      h(
        'button',
        {
          type: 'button',
          class: 'secondary',
          'aria-describedby': label,
          onclick: () => void act(item, action),
        },
        text,
      );
    const changeable = item.status === 'active' || item.status === 'paused';
    return h(
      'tr',
      { dataset: { scheduleId: item.id, status: item.status } },
      h('th', { scope: 'row', id: label }, item.prompt),
      h('td', {}, where(item)),
      h('td', {}, creatorOf(item)),
      h(
        'td',
        {},
        h('span', { class: 'badge' }, item.status),
        item.statusNote ? h('span', { class: 'note' }, ` ${item.statusNote}`) : '',
      ),
      h(
        'td',
        {},
        item.nextRunAt ? time(item.nextRunAt) : '—',
        h('br'),
        h('span', { class: 'note' }, item.cron ? `${item.cron} (${item.timezone})` : 'once'),
      ),
      h(
        'td',
        {},
        item.lastRunAt ? time(item.lastRunAt) : '—',
        item.lastOutcome
          ? [h('br'), h('span', { class: 'note' }, outcomes[item.lastOutcome] ?? item.lastOutcome)]
          : '',
      ),
      h('td', { class: 'number' }, formatNumber(item.failures)),
      h(
        'td',
        {},
        h(
          'div',
          { class: 'row-actions' },
          item.status === 'active' ? button('pause', 'Pause') : '',
          item.status === 'paused' ? button('resume', 'Resume') : '',
          changeable ? button('cancel', 'Cancel') : '',
        ),
      ),
    );
  }

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void load();
  });

  /** A run that ended changes its task's last outcome and next run. */
  function refresh() {
    if (!loaded || panel.hidden) return;
    clearTimeout(reloadTimer);
    reloadTimer = setTimeout(() => void load(), 200);
  }

  return {
    show() {
      void load();
    },
    onReconnect: refresh,
    onLiveEvent(event) {
      if (event.type === 'turn_finished') refresh();
    },
    close() {
      clearTimeout(reloadTimer);
    },
  };
}
