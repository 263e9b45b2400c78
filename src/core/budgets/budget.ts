import { type ChatUser, type ConversationAddress, onPlatform, type Platform } from '../contracts/events.js';
import type { Identity, People } from '../contracts/people.js';
import type { UsageTotals } from '../contracts/store.js';
import { formatCost, startOfUtcDay, startOfUtcMonth } from '../usage/usage-report.js';

/**
 * A budget caps what one workspace, channel or person spends on the model per UTC day or calendar month,
 * counted from the usage each turn records (its sub-agents and compaction included). A `user` budget names
 * one identity and caps its person: what they spend through every identity, on every platform. These are its
 * shapes and the words notes, answers and cards use for it.
 */

export const budgetScopes = ['workspace', 'channel', 'user'] as const;
export type BudgetScope = (typeof budgetScopes)[number];

export const budgetLimits = ['tokensPerDay', 'costPerDay', 'costPerMonth'] as const;
export type BudgetLimit = (typeof budgetLimits)[number];

/** `approve`: the turn waits for an approver's card; `stop`: it answers that the budget is spent. */
export const budgetActions = ['approve', 'stop'] as const;
export type BudgetAction = (typeof budgetActions)[number];

export interface Budget {
  scope: BudgetScope;
  platform: Platform;
  /** The workspace, channel or user id, as the platform names it (a user: any identity of the person). */
  id: string;
  /** How notes and cards name it ("#ops"); absent: "this channel", "this workspace", the person's name. */
  name?: string | undefined;
  tokensPerDay?: number | undefined;
  /** USD. */
  costPerDay?: number | undefined;
  /** USD. */
  costPerMonth?: number | undefined;
  /** Fractions of a limit past which the thread gets a note, once per period each. */
  warnAt: readonly number[];
  onExceeded: BudgetAction;
}

/** Whose spending a turn adds to: its conversation, and the person it is charged to (its requester). */
export interface BudgetSubject {
  address: ConversationAddress;
  conversationKey: string;
  person: ChatUser;
}

/** One limit of a budget, measured for the current period. */
export interface LimitState {
  budget: Budget;
  /** `scope:platform:id`. */
  key: string;
  limit: BudgetLimit;
  max: number;
  used: number;
  /** `used / max`. */
  fraction: number;
  /** `2026-05-01` for a day, `2026-05` for a month. */
  period: string;
  totals: UsageTotals;
  /** How the budget is named to people, for this subject. */
  label: string;
}

export const budgetKey = (budget: Pick<Budget, 'scope' | 'platform' | 'id'>) =>
  `${budget.scope}:${budget.platform}:${budget.id}`;

/** The identity a `user` budget names. */
export const budgetIdentity = (budget: Pick<Budget, 'platform' | 'id'>): Identity => ({
  platform: budget.platform,
  id: budget.id,
});

/** Whether the turn's requester is the person a `user` budget names, through whichever identity. */
const chargesPerson = (budget: Budget, subject: BudgetSubject, people: People) =>
  people.same(budgetIdentity(budget), onPlatform(subject.person, subject.address.platform));

/** Whether the turn's spending counts toward `budget`: a person's wherever they spend it. */
export function applies(budget: Budget, subject: BudgetSubject, people: People): boolean {
  const { address } = subject;
  if (budget.scope === 'user') return chargesPerson(budget, subject, people);
  if (budget.platform !== address.platform) return false;
  return budget.scope === 'workspace' ? address.workspace === budget.id : address.channel === budget.id;
}

export const isMonthly = (limit: BudgetLimit) => limit === 'costPerMonth';

/** Where the limit's period starts, and its name. */
export function periodOf(limit: BudgetLimit, now: Date): { since: Date; period: string } {
  return isMonthly(limit)
    ? { since: startOfUtcMonth(now), period: now.toISOString().slice(0, 7) }
    : { since: startOfUtcDay(now), period: now.toISOString().slice(0, 10) };
}

export const tokensOf = (totals: UsageTotals) =>
  totals.promptTokens + totals.completionTokens + totals.compactionTokens;

/** What counts against the limit: every token, or the priced cost (an unpriced turn costs nothing here). */
export const usedOf = (limit: BudgetLimit, totals: UsageTotals) =>
  limit === 'tokensPerDay' ? tokensOf(totals) : (totals.costUsd ?? 0);

const numbers = new Intl.NumberFormat('en-US');

export function amount(limit: BudgetLimit, value: number): string {
  return limit === 'tokensPerDay' ? `${numbers.format(Math.round(value))} tokens` : formatCost(value);
}

export function labelOf(budget: Budget, subject: BudgetSubject, people: People): string {
  if (budget.name) return budget.name;
  if (budget.scope === 'user')
    return chargesPerson(budget, subject, people) ? (subject.person.name ?? budget.id) : budget.id;
  return `this ${budget.scope}`;
}

/** "its 200,000 tokens for today", "their $5.00 for this month". */
export function limitWords(state: Pick<LimitState, 'budget' | 'limit' | 'max'>): string {
  const owner = state.budget.scope === 'user' ? 'their' : 'its';
  return `${owner} ${amount(state.limit, state.max)} ${isMonthly(state.limit) ? 'for this month' : 'for today'}`;
}

export const capitalized = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);
