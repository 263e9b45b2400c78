// Budgets: each configured limit with what its workspace, channel or person has used of it in the current period
// (docs/policy.md, "Budgets"), shown above the usage chart. The section stays hidden when no budget is set.

import { formatCost, formatNumber, h } from './dom.js';
import { listSection } from './list-section.js';

const limits = {
  tokensPerDay: { unit: 'tokens', period: 'today' },
  costPerDay: { unit: 'cost', period: 'today' },
  costPerMonth: { unit: 'cost', period: 'this month' },
};
const whenSpent = { approve: 'waits for an approver', stop: 'stops answering' };

const amount = (item, value) =>
  limits[item.limit]?.unit === 'tokens' ? `${formatNumber(Math.round(value))} tokens` : formatCost(value);

export function createBudgetList(context) {
  function row(item) {
    const share = Math.floor(item.fraction * 100);
    const state =
      item.fraction >= 1 ? 'spent' : item.warnAt.some((at) => item.fraction >= at) ? 'warned' : 'ok';
    return h(
      'tr',
      { dataset: { budget: `${item.scope}:${item.platform}:${item.id}`, limit: item.limit, state } },
      h('th', { scope: 'row' }, item.name, ' ', h('code', {}, `${item.platform} ${item.scope}`)),
      h('td', {}, `${amount(item, item.max)} ${limits[item.limit]?.period ?? item.period}`),
      h('td', { class: 'number' }, amount(item, item.used)),
      h('td', { class: 'number' }, `${share}%`),
      h('td', {}, whenSpent[item.onExceeded] ?? item.onExceeded),
    );
  }

  return listSection(context, {
    path: '/budgets',
    section: 'budgets',
    rows: 'budget-rows',
    statusLine: 'budgets-status-line',
    row,
  });
}
