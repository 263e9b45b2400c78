import { lt } from 'drizzle-orm';
import type { BudgetRepository } from '../../core/contracts/store.js';
import type { Database } from '../database.js';
import { budgetNotices } from '../schema.js';

/** Budget notes: a row per note posted, inserted by the one turn (of any process) that posts it. */
export function budgetRepository(db: Database): BudgetRepository {
  return {
    async claimNotice({ limit, ...notice }) {
      const inserted = await db
        .insert(budgetNotices)
        .values({ ...notice, limitName: limit })
        .onConflictDoNothing()
        .returning({ budget: budgetNotices.budget });
      return inserted.length > 0;
    },

    async pruneNotices(before) {
      const deleted = await db
        .delete(budgetNotices)
        .where(lt(budgetNotices.createdAt, before))
        .returning({ budget: budgetNotices.budget });
      return deleted.length;
    },
  };
}
