import { and, desc, eq, ilike, inArray, sql } from 'drizzle-orm';
import type { Memory, MemoryOwner, MemoryRepository } from '../../core/contracts/store.js';
import type { Database } from '../database.js';
import { memories } from '../schema.js';

/**
 * The owner's memories. A Slack member id names a person within one workspace: asked on Slack, a memory saved
 * under a bare Slack identity is theirs only where it was told (the same id in another workspace is someone
 * else). A person `people:` lists is one person across platforms, and with installs over OAuth no Slack id may
 * be listed there, so their memories never cross workspaces either.
 */
const ownedBy = (owner: MemoryOwner) =>
  and(
    inArray(memories.ownerKey, [...owner.keys]),
    owner.platform === 'slack'
      ? sql`not (${memories.ownerKey} like 'slack:%' and ${memories.workspace} <> ${owner.workspace})`
      : undefined,
  );

/** `%` and `_` in a user's words are literal, not wildcards. */
const escapeLike = (word: string) => word.replace(/[\\%_]/g, (character) => `\\${character}`);

const toMemory = (row: typeof memories.$inferSelect): Memory => ({
  id: row.id,
  content: row.content,
  createdAt: row.createdAt,
});

export function memoryRepository(db: Database): MemoryRepository {
  return {
    async add(owner, content) {
      const [row] = await db
        .insert(memories)
        .values({
          ownerKey: owner.key,
          platform: owner.platform,
          workspace: owner.workspace,
          userId: owner.userId,
          content,
        })
        .returning();
      if (!row) throw new Error('Could not save memory');
      return toMemory(row);
    },

    async search(owner, query, limit) {
      const words = query.split(/\s+/).filter((word) => word.length > 0);
      const rows = await db
        .select()
        .from(memories)
        .where(and(ownedBy(owner), ...words.map((word) => ilike(memories.content, `%${escapeLike(word)}%`))))
        .orderBy(desc(memories.lastUsedAt))
        .limit(limit);
      return rows.map(toMemory);
    },

    async touch(ids) {
      if (ids.length === 0) return;
      await db
        .update(memories)
        .set({ lastUsedAt: sql`now()` })
        .where(inArray(memories.id, [...ids]));
    },

    async remove(owner, id) {
      const rows = await db
        .delete(memories)
        .where(and(ownedBy(owner), eq(memories.id, id)))
        .returning({ id: memories.id });
      return rows.length > 0;
    },
  };
}
