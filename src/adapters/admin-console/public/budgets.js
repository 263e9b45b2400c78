// Budgets: each configured limit with what its workspace, channel or person has used of it in the current period
// (docs/policy.md, "Budgets"), shown above the usage chart. The section stays hidden when no budget is set.

import { byId, formatCost, formatNumber, h, say, sayFailure } from './dom.js';

const limits = {
  tokensPerDay: { unit: 'tokens', period: 'today' },
  costPerDay: { unit: 'cost', period: 'today' },
  costPerMonth: { unit: 'cost', period: 'this month' },
};
const whenSpent = { approve: 'waits for an approver', stop: 'stops answering' };

const amount = (item, value) =>
  limits[item.limit]?.unit === 'tokens' ? `${formatNumber(Math.round(value))} tokens` : formatCost(value);

export function createBudgetList(context) {
  const section = byId('budgets');
  const rows = byId('budget-rows');
  const statusLine = byId('budgets-status-line');
  let generation = 0;

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

  return {
    async load() {
      // Live events reload often: only the latest answer is shown.
      const mine = ++generation;
      try {
        const { items = [] } = await context.api.json('/budgets');
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
