import { eq, gt, lt } from 'drizzle-orm';
import type { Database } from '../database.js';
import { butlerProcesses } from '../schema.js';

/** The processes sharing the database, by the budgets they pace (roster-schema.ts). */
export interface ProcessRoster {
  /** Records that process `id` is alive and paces `budgets`. */
  beat(id: string, budgets: readonly string[]): Promise<void>;
  /** How many processes seen since `since` pace each budget. */
  alive(since: Date): Promise<Map<string, number>>;
  /** Process `id` stopped; rows not seen since `before` are forgotten too. */
  leave(id: string, before: Date): Promise<void>;
}

export function processRoster(db: Database): ProcessRoster {
  return {
    async beat(id, budgets) {
      const row = { id, budgets: [...budgets], seenAt: new Date() };
      await db
        .insert(butlerProcesses)
        .values(row)
        .onConflictDoUpdate({
          target: butlerProcesses.id,
          set: { budgets: row.budgets, seenAt: row.seenAt },
        });
    },
    async alive(since) {
      const rows = await db
        .select({ budgets: butlerProcesses.budgets })
        .from(butlerProcesses)
        .where(gt(butlerProcesses.seenAt, since));
      const counts = new Map<string, number>();
      for (const row of rows)
        for (const budget of row.budgets) counts.set(budget, (counts.get(budget) ?? 0) + 1);
      return counts;
    },
    async leave(id, before) {
      await db.delete(butlerProcesses).where(eq(butlerProcesses.id, id));
      await db.delete(butlerProcesses).where(lt(butlerProcesses.seenAt, before));
    },
  };
}
