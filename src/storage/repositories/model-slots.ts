import { and, eq, lt, sql } from 'drizzle-orm';
import type { ModelSlotRepository } from '../../core/contracts/store.js';
import type { Database } from '../database.js';
import { modelSlots } from '../schema.js';

const leaseUntil = (leaseMs: number) => sql`now() + ${leaseMs} * interval '1 millisecond'`;

/**
 * Model slots as rows of `model_slots`, one per slot number in use. Taking one is one statement: a free
 * number (none, or a lapsed lease) picked at random, inserted or taken over. Two processes picking the same
 * number meet on its primary key: the second's update finds the first's live lease and takes nothing, and
 * tries again.
 */
export function modelSlotRepository(db: Database): ModelSlotRepository {
  return {
    async take(model, cap, holder, leaseMs) {
      const free = db
        .select({
          model: sql<string>`${model}::text`.as('model'),
          slot: sql<number>`candidate`.as('slot'),
          holder: sql<string>`${holder}::text`.as('holder'),
          expiresAt: sql<Date>`${leaseUntil(leaseMs)}`.as('expires_at'),
        })
        .from(sql`generate_series(0, ${cap}::int - 1) as candidate`)
        .where(
          sql`not exists (select 1 from ${modelSlots} as held
            where held.model = ${model} and held.slot = candidate and held.expires_at >= now())`,
        )
        .orderBy(sql`random()`)
        .limit(1);
      const [taken] = await db
        .insert(modelSlots)
        .select(free)
        .onConflictDoUpdate({
          target: [modelSlots.model, modelSlots.slot],
          set: { holder: sql`excluded.holder`, expiresAt: sql`excluded.expires_at` },
          setWhere: lt(modelSlots.expiresAt, sql`now()`),
        })
        .returning({ slot: modelSlots.slot });
      return taken?.slot;
    },

    async renew(holder, leaseMs) {
      await db
        .update(modelSlots)
        .set({ expiresAt: leaseUntil(leaseMs) })
        .where(eq(modelSlots.holder, holder));
    },

    async release(model, slot, holder) {
      await db
        .delete(modelSlots)
        .where(and(eq(modelSlots.model, model), eq(modelSlots.slot, slot), eq(modelSlots.holder, holder)));
    },
  };
}
