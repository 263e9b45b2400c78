import { sql } from 'drizzle-orm';
import type { OpenDatabase } from '../../src/storage/database.js';
import { approvals } from '../../src/storage/schema.js';

/**
 * Moves a waiting request (its whole batch) `ms` into the past, so its reminder or escalation falls due at the
 * next sweep. Tests give `remindAfter` and `escalateAfter` hours and age the request when they want the next
 * stage: a click that must land before the reminder then never races a real delay on a loaded machine.
 */
export async function ageRequest(
  database: Pick<OpenDatabase, 'db'>,
  approvalId: string,
  ms: number,
): Promise<void> {
  await database.db
    .update(approvals)
    .set({
      createdAt: sql`${approvals.createdAt} - ${Math.round(ms)}::int * interval '1 millisecond'`,
      resumedAt: sql`${approvals.resumedAt} - ${Math.round(ms)}::int * interval '1 millisecond'`,
    })
    .where(
      sql`${approvals.id} = ${approvalId} or ${approvals.batchId} = (select batch_id from approvals where id = ${approvalId})`,
    );
}

export const hour = 3_600_000;
