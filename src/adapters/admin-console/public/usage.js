// Usage: where each budget stands; tokens (and cost, when the config has prices) per day, workspace, channel,
// user or conversation, as an inline SVG bar chart with the same figures in a table beneath it; then the latest
// feedback on replies.

import { createBudgetList } from './budgets.js';
import { byId, formatCost, formatNumber, h, say, sayFailure } from './dom.js';
import { createFeedbackList } from './feedback.js';
import { createInstallationList } from './installations.js';

const svgNamespace = 'http://www.w3.org/2000/svg';
const segments = [
  ['promptTokens', 'prompt', 'bar-prompt'],
  ['completionTokens', 'completion', 'bar-completion'],
  ['compactionTokens', 'compaction', 'bar-compaction'],
];
const groupLabels = {
  day: 'Day',
  workspace: 'Workspace',
  channel: 'Channel',
  user: 'User',
  conversation: 'Conversation',
};
const dayMs = 86_400_000;
/** Bars in a chart by name (days all fit); the table lists every group. */
const mostBars = 25;

const compact = new Intl.NumberFormat(undefined, { notation: 'compact', maximumFractionDigits: 1 });
const total = (item) => item.promptTokens + item.completionTokens + item.compactionTokens;

function svg(tag, attributes = {}, ...children) {
  const element = document.createElementNS(svgNamespace, tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  for (const child of children) if (child) element.append(child);
  return element;
}

function describe(item) {
  const parts = segments.map(([field, label]) => `${label} ${formatNumber(item[field])}`).join(', ');
  const cost = item.costUsd === null || item.costUsd === undefined ? '' : `, ${formatCost(item.costUsd)}`;
  return `${item.key}: ${formatNumber(total(item))} tokens (${parts}), ${item.turns} turns${cost}`;
}

/** A round top for the axis, so that the grid lines fall on readable numbers. */
function niceMax(value) {
  if (value <= 0) return 1;
  const magnitude = 10 ** Math.floor(Math.log10(value));
  const step = [1, 2, 2.5, 5, 10].find((factor) => factor * magnitude >= value) ?? 10;
  return step * magnitude;
}

/** Every day from `since` to today, zero where nothing was spent, oldest first. */
function withEmptyDays(items, sinceDays) {
  const byDay = new Map(items.map((item) => [item.key, item]));
  if (!sinceDays) return [...items].reverse();
  const today = new Date();
  const days = [];
  for (let offset = sinceDays - 1; offset >= 0; offset--) {
    const key = new Date(today.getTime() - offset * dayMs).toISOString().slice(0, 10);
    days.push(
      byDay.get(key) ?? {
        key,
        turns: 0,
        promptTokens: 0,
        completionTokens: 0,
        compactionTokens: 0,
        costUsd: null,
      },
    );
  }
  return days;
}

function stack(item, place) {
  const group = svg('g', { class: 'bar-group' }, svg('title', {}, document.createTextNode(describe(item))));
  let offset = 0;
  for (const [field, , className] of segments) {
    if (item[field] <= 0) continue;
    group.append(svg('rect', { class: `bar ${className}`, ...place(offset, item[field]) }));
    offset += item[field];
  }
  return group;
}

/** Columns over time, oldest on the left. */
function columnChart(items, titleId, descriptionId) {
  const [width, height, left, right, top, bottom] = [720, 260, 56, 8, 12, 36];
  const plotWidth = width - left - right;
  const plotHeight = height - top - bottom;
  const max = niceMax(Math.max(0, ...items.map(total)));
  const step = plotWidth / Math.max(items.length, 1);
  const barWidth = Math.max(2, Math.min(36, step * 0.7));
  const chart = svg('g', {});
  for (let tick = 0; tick <= 4; tick++) {
    const y = top + plotHeight * (1 - tick / 4);
    chart.append(svg('line', { class: 'grid', x1: left, x2: width - right, y1: y, y2: y }));
    chart.append(
      svg(
        'text',
        { class: 'axis', x: left - 6, y: y + 4, 'text-anchor': 'end' },
        document.createTextNode(compact.format((max * tick) / 4)),
      ),
    );
  }
  const labelEvery = Math.ceil(items.length / 10);
  items.forEach((item, index) => {
    const x = left + step * index + (step - barWidth) / 2;
    chart.append(
      stack(item, (offset, value) => ({
        x,
        width: barWidth,
        y: top + plotHeight * (1 - (offset + value) / max),
        height: (plotHeight * value) / max,
      })),
    );
    if (index % labelEvery === 0)
      chart.append(
        svg(
          'text',
          { class: 'axis', x: x + barWidth / 2, y: height - bottom + 16, 'text-anchor': 'middle' },
          document.createTextNode(item.key.slice(5)),
        ),
      );
  });
  return frame(chart, width, height, titleId, descriptionId);
}

/** Horizontal bars, most tokens first, labelled by name. */
function barChart(items, titleId, descriptionId) {
  const [width, labelWidth, valueWidth, rowHeight, top] = [720, 220, 70, 26, 8];
  const height = top * 2 + rowHeight * items.length;
  const plotWidth = width - labelWidth - valueWidth;
  const max = niceMax(Math.max(0, ...items.map(total)));
  const chart = svg('g', {});
  items.forEach((item, index) => {
    const y = top + rowHeight * index;
    const label = item.key.length > 30 ? `${item.key.slice(0, 29)}…` : item.key;
    chart.append(
      svg(
        'text',
        { class: 'axis', x: labelWidth - 8, y: y + rowHeight / 2 + 4, 'text-anchor': 'end' },
        document.createTextNode(label),
      ),
    );
    chart.append(
      stack(item, (offset, value) => ({
        x: labelWidth + (plotWidth * offset) / max,
        width: (plotWidth * value) / max,
        y: y + 4,
        height: rowHeight - 8,
      })),
    );
    chart.append(
      svg(
        'text',
        { class: 'axis', x: labelWidth + (plotWidth * total(item)) / max + 6, y: y + rowHeight / 2 + 4 },
        document.createTextNode(compact.format(total(item))),
      ),
    );
  });
  return frame(chart, width, height, titleId, descriptionId);
}

function frame(chart, width, height, titleId, descriptionId) {
  return svg(
    'svg',
    {
      viewBox: `0 0 ${width} ${height}`,
      role: 'img',
      'aria-labelledby': `${titleId} ${descriptionId}`,
      class: 'usage-chart',
      preserveAspectRatio: 'xMinYMin meet',
    },
    chart,
  );
}

export function createUsagePanel(context) {
  const { api } = context;
  const panel = byId('panel-usage');
  const group = byId('usage-group');
  const range = byId('usage-range');
  const chartBox = byId('usage-chart');
  const caption = byId('usage-caption');
  const rows = byId('usage-rows');
  const statusLine = byId('usage-status-line');
  let loaded = false;
  let generation = 0;
  let reloadTimer;
  // Ratings, budgets and installations serve every tenant: a key limited to some gets none of them.
  const everyTenant = !context.scopes.tenants;
  const feedback = everyTenant ? createFeedbackList(context) : undefined;
  const budgets = everyTenant ? createBudgetList(context) : undefined;
  const installations = everyTenant ? createInstallationList(context) : undefined;
  byId('feedback').hidden = !everyTenant;

  async function load() {
    const mine = ++generation;
    void feedback?.load();
    void budgets?.load();
    void installations?.load();
    const groupBy = group.value;
    const sinceDays = Number(range.value) || 0;
    const params = new URLSearchParams({ groupBy });
    if (sinceDays) {
      const today = new Date().toISOString().slice(0, 10);
      params.set('since', new Date(Date.parse(today) - (sinceDays - 1) * dayMs).toISOString());
    }
    try {
      const result = await api.json(`/usage?${params}`);
      if (mine !== generation) return;
      loaded = true;
      say(statusLine, '');
      render(groupBy, result.items ?? [], sinceDays);
    } catch (error) {
      if (mine === generation) sayFailure(statusLine, error, context);
    }
  }

  function render(groupBy, items, sinceDays) {
    const label = groupLabels[groupBy] ?? groupBy;
    const tokens = items.reduce((sum, item) => sum + total(item), 0);
    const priced = items.filter((item) => item.costUsd !== null && item.costUsd !== undefined);
    const cost = priced.reduce((sum, item) => sum + item.costUsd, 0);
    const titleId = caption.id;
    caption.textContent = `Tokens per ${label.toLowerCase()}: ${formatNumber(tokens)} in all${
      priced.length > 0 ? `, ${formatCost(cost)}` : ''
    }.`;
    const description = h(
      'p',
      { id: 'usage-chart-description', class: 'visually-hidden' },
      items.length === 0
        ? 'No usage in this period.'
        : `${items.length} ${label.toLowerCase()} groups; each bar stacks prompt, completion and compaction tokens. The table below has the figures.`,
    );
    const shown = groupBy === 'day' ? withEmptyDays(items, sinceDays) : items.slice(0, mostBars);
    chartBox.replaceChildren(
      description,
      items.length === 0
        ? h('p', { class: 'empty' }, 'No usage recorded in this period.')
        : groupBy === 'day'
          ? columnChart(shown, titleId, description.id)
          : barChart(shown, titleId, description.id),
    );
    byId('usage-key-heading').textContent = label;
    rows.replaceChildren(
      ...items.map((item) =>
        h(
          'tr',
          {},
          h('th', { scope: 'row' }, h('code', {}, item.key)),
          h('td', { class: 'number' }, formatNumber(item.turns)),
          h('td', { class: 'number' }, formatNumber(item.promptTokens)),
          h('td', { class: 'number' }, formatNumber(item.completionTokens)),
          h('td', { class: 'number' }, formatNumber(item.compactionTokens)),
          h('td', { class: 'number' }, formatCost(item.costUsd)),
        ),
      ),
    );
  }

  byId('usage-filter').addEventListener('submit', (event) => {
    event.preventDefault();
    void load();
  });
  group.addEventListener('change', () => void load());
  range.addEventListener('change', () => void load());

  function refresh() {
    if (!loaded || panel.hidden) return;
    clearTimeout(reloadTimer);
    reloadTimer = setTimeout(() => void load(), 500);
  }

  return {
    show() {
      if (!loaded) void load();
      else refresh();
    },
    onReconnect: refresh,
    onLiveEvent(event) {
      if (event.type === 'turn_finished' || event.type === 'compaction') refresh();
    },
    close() {
      clearTimeout(reloadTimer);
    },
  };
}
