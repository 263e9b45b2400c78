import type { Logger } from '../contracts/logger.js';
import type { People } from '../contracts/people.js';
import type { Store, UsageTotals } from '../contracts/store.js';
import {
  amount,
  applies,
  type Budget,
  type BudgetSubject,
  budgetIdentity,
  budgetKey,
  budgetLimits,
  capitalized,
  isMonthly,
  type LimitState,
  labelOf,
  limitWords,
  periodOf,
  tokensOf,
  usedOf,
} from './budget.js';

/**
 * The configured budgets, measured against recorded usage before a turn calls the model: whether it may,
 * the notes its thread gets on the way, and what a card says about continuing near a limit.
 */

export type BudgetVerdict =
  /** Go on; `notes` are the warnings this turn is the first to cross. */
  | { action: 'go'; notes: string[] }
  /** Answer `message` instead of calling the model. */
  | { action: 'stop'; message: string }
  /** Wait for an approver: these limits are spent. */
  | { action: 'approve'; exceeded: LimitState[] };

const percent = (fraction: number) => `${Math.floor(fraction * 100)}%`;
/** "#ops has used 76% of its 200,000 tokens for today": a warning note, and a line of `usage`. */
const share = (state: LimitState) =>
  `${capitalized(state.label)} has used ${percent(state.fraction)} of ${limitWords(state)}`;

export class BudgetBook {
  /**
   * Notes this process knows were claimed (by it or another): once a threshold is passed every later turn of
   * the period would ask again, and the answer never changes, so it is asked once.
   */
  private readonly noted = new Set<string>();

  constructor(
    private readonly budgets: readonly Budget[],
    private readonly store: Store,
    /** Who is who: a `user` budget counts every identity of its person. */
    private readonly people: People,
    private readonly logger: Logger,
  ) {}

  /** Every limit of every budget the subject's spending counts toward, for the current period. */
  measure(subject: BudgetSubject, now = new Date()): Promise<LimitState[]> {
    return this.measureEach(
      this.budgets.filter((budget) => applies(budget, subject, this.people)),
      (budget) => labelOf(budget, subject, this.people),
      now,
    );
  }

  /**
   * Where every budget stands now, each limit for its current period, named by its `name` or by its scope and
   * id: what the admin console and `GET /api/v1/budgets` show.
   */
  standing(now = new Date()): Promise<LimitState[]> {
    return this.measureEach(this.budgets, (budget) => budget.name ?? `${budget.scope} ${budget.id}`, now);
  }

  /** For `usage` in chat: a line per limit the subject's spending counts toward, how much of it is used. */
  async describe(subject: BudgetSubject, now = new Date()): Promise<string[]> {
    const states = await this.measure(subject, now);
    return states.map((state) => `${share(state)} (${amount(state.limit, state.used)}).`);
  }

  private async measureEach(
    budgets: readonly Budget[],
    label: (budget: Budget) => string,
    now: Date,
  ): Promise<LimitState[]> {
    const states: LimitState[] = [];
    for (const budget of budgets) {
      const totalsBySince = new Map<number, Promise<UsageTotals>>();
      for (const limit of budgetLimits) {
        const max = budget[limit];
        if (max === undefined) continue;
        const { since, period } = periodOf(limit, now);
        // A day's tokens and cost come from one query.
        const totals = totalsBySince.get(since.getTime()) ?? this.totals(budget, since);
        totalsBySince.set(since.getTime(), totals);
        const used = usedOf(limit, await totals);
        states.push({
          budget,
          key: budgetKey(budget),
          limit,
          max,
          used,
          fraction: used / max,
          period,
          totals: await totals,
          label: label(budget),
        });
      }
    }
    return states;
  }

  /** What the turn may do. A spent `stop` budget wins over a spent `approve` one: nobody may override it. */
  async check(subject: BudgetSubject, now = new Date()): Promise<BudgetVerdict> {
    const states = await this.measure(subject, now);
    const spent = states.filter((state) => state.fraction >= 1);
    const stop = spent.find((state) => state.budget.onExceeded === 'stop');
    if (stop)
      return {
        action: 'stop',
        message: `${capitalized(stop.label)} has used ${limitWords(stop)}; ask an admin to raise the budget.`,
      };
    if (spent.length > 0) return { action: 'approve', exceeded: spent };
    const notes: string[] = [];
    for (const state of states) {
      const note = await this.claimNote(state, subject);
      if (note) notes.push(note);
    }
    return { action: 'go', notes };
  }

  /**
   * For the cards of a turn near a budget (past its first `warnAt`, or spent): where it stands and what
   * continuing is likely to cost, from the average turn there in the period. Undefined when none is near.
   */
  async cardNote(subject: BudgetSubject, now = new Date()): Promise<string | undefined> {
    const states = await this.measure(subject, now);
    const near = states
      .filter((state) => state.fraction >= Math.min(1, ...state.budget.warnAt))
      .sort((left, right) => right.fraction - left.fraction);
    const [closest] = near;
    if (!closest) return undefined;
    const standing = `${capitalized(closest.label)} is at ${percent(closest.fraction)} of ${limitWords(closest)}`;
    const { totals } = closest;
    if (totals.turns === 0) return `${standing}.`;
    const tokens = amount('tokensPerDay', tokensOf(totals) / totals.turns);
    const cost = totals.costUsd === null ? '' : ` (${amount('costPerDay', totals.costUsd / totals.turns)})`;
    const where = isMonthly(closest.limit) ? 'this month' : 'today';
    return `${standing}; continuing is estimated at about ${tokens}${cost}, the average turn there ${where}.`;
  }

  private totals(budget: Budget, since: Date): Promise<UsageTotals> {
    const { usage } = this.store;
    if (budget.scope === 'user')
      return usage.totals({ users: this.people.identitiesOf(budgetIdentity(budget)), since });
    const where = budget.scope === 'workspace' ? { workspace: budget.id } : { channel: budget.id };
    return usage.totals({ platform: budget.platform, ...where, since });
  }

  /**
   * The note for the highest fraction the limit passed that no turn has noted yet in this period, claimed
   * for every fraction passed so that a lower one is not noted after a higher one.
   */
  private async claimNote(state: LimitState, subject: BudgetSubject): Promise<string | undefined> {
    const passed = state.budget.warnAt.filter((fraction) => state.fraction >= fraction);
    let claimed = false;
    for (const threshold of passed) {
      const known = `${state.key}|${state.limit}|${state.period}|${threshold}`;
      if (this.noted.has(known)) continue;
      const notice = {
        budget: state.key,
        limit: state.limit,
        period: state.period,
        threshold,
        conversationKey: subject.conversationKey,
      };
      if (await this.store.budgets.claimNotice(notice)) claimed = true;
      this.noted.add(known);
    }
    if (!claimed) return undefined;
    this.logger.info(
      { budget: state.key, limit: state.limit, period: state.period, fraction: state.fraction },
      'budget warning',
    );
    return `${share(state)}.`;
  }
}
