import { describe, expect, it } from 'vitest';
import { groupCommit } from '../../../src/storage/repositories/group-commit.js';

/** A statement that takes a moment, recording what each call was given. */
function recorder(failWhen: (items: readonly number[]) => boolean = () => false) {
  const statements: number[][] = [];
  const run = async (items: readonly number[]) => {
    statements.push([...items]);
    await new Promise((resolve) => setTimeout(resolve, 5));
    if (failWhen(items)) throw new Error(`statement of ${items.join(',')} failed`);
    return items.map((item) => item * 10);
  };
  return {
    statements,
    one: async (item: number) => (await run([item]))[0] as number,
    many: run,
  };
}

describe('group commit', () => {
  it('sends a lone call at once, and what arrives meanwhile together', async () => {
    const database = recorder();
    const insert = groupCommit({ ...database, inFlight: 1, maxBatch: 100 });
    const results = await Promise.all([1, 2, 3, 4, 5].map(insert));
    expect(results).toEqual([10, 20, 30, 40, 50]);
    expect(database.statements).toEqual([[1], [2, 3, 4, 5]]);
  });

  it('keeps batches within maxBatch and statements within inFlight', async () => {
    const database = recorder();
    const insert = groupCommit({ ...database, inFlight: 2, maxBatch: 3 });
    await Promise.all(Array.from({ length: 10 }, (_, index) => insert(index)));
    expect(database.statements).toEqual([[0], [1], [2, 3, 4], [5, 6, 7], [8, 9]]);
  });

  it('settles a caller only after its own statement, and fails only the bad item of a failed batch', async () => {
    const database = recorder((items) => items.includes(3));
    const insert = groupCommit({ ...database, inFlight: 1, maxBatch: 100 });
    const results = await Promise.allSettled([1, 2, 3, 4].map(insert));
    expect(results.map((result) => result.status)).toEqual([
      'fulfilled',
      'fulfilled',
      'rejected',
      'fulfilled',
    ]);
    // The batch [2, 3, 4] failed as a whole; each item was then tried alone.
    expect(database.statements).toEqual([[1], [2, 3, 4], [2], [3], [4]]);
  });
});
