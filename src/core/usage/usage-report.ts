import type { UsageTotals } from '../contracts/store.js';

/** The chat answer to `usage`: a conversation's and a person's totals for today and this month (UTC). */

export interface UsagePeriods {
  today: UsageTotals;
  month: UsageTotals;
}

export function startOfUtcDay(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
}

export function startOfUtcMonth(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
}

const numberFormat = new Intl.NumberFormat('en-US');

export function formatCost(usd: number): string {
  if (usd > 0 && usd < 0.01) return '<$0.01';
  return `$${usd.toFixed(2)}`;
}

/** "1,234 tokens ($0.01)": every token the turns spent, compaction included; the cost when priced. */
function describe(totals: UsageTotals): string {
  const tokens = totals.promptTokens + totals.completionTokens + totals.compactionTokens;
  const cost = totals.costUsd === null ? '' : ` (${formatCost(totals.costUsd)})`;
  return `${numberFormat.format(tokens)} tokens${cost}`;
}

const line = (label: string, periods: UsagePeriods) =>
  `${label}: today ${describe(periods.today)}, this month ${describe(periods.month)}`;

export function formatUsageReport(input: {
  conversation: UsagePeriods;
  person: UsagePeriods;
  personName: string;
}): string {
  return [
    line('This conversation', input.conversation),
    line(`You (${input.personName})`, input.person),
  ].join('\n');
}
