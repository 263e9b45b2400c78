/**
 * Group commit: calls that arrive while a statement is in flight wait for it, then go together in one
 * statement (one round trip, one commit, one WAL flush). A lone call goes at once, so this adds no
 * latency when traffic is light; under load batches grow by themselves to what arrives during one
 * statement. Each caller's promise settles only after the statement holding its item committed.
 */

export interface GroupCommitOptions<Item, Result> {
  /** One item, alone (also the fallback when a batch fails, so one bad item cannot fail the others). */
  one(item: Item): Promise<Result>;
  /** Several items in one statement; results in the items' order. */
  many(items: readonly Item[]): Promise<Result[]>;
  /** Statements in flight at once (the rest queue); at most this many connections are used. */
  inFlight: number;
  maxBatch: number;
}

interface Waiting<Item, Result> {
  item: Item;
  resolve(result: Result): void;
  reject(error: unknown): void;
}

export function groupCommit<Item, Result>(
  options: GroupCommitOptions<Item, Result>,
): (item: Item) => Promise<Result> {
  const queue: Waiting<Item, Result>[] = [];
  let running = 0;

  async function write(batch: Waiting<Item, Result>[]): Promise<void> {
    if (batch.length === 1) {
      const [only] = batch as [Waiting<Item, Result>];
      await options.one(only.item).then(only.resolve, only.reject);
      return;
    }
    try {
      const results = await options.many(batch.map((waiting) => waiting.item));
      for (const [index, waiting] of batch.entries()) waiting.resolve(results[index] as Result);
    } catch {
      // Nothing of a failed statement committed: each item is tried alone, and fails alone.
      await Promise.all(
        batch.map((waiting) => options.one(waiting.item).then(waiting.resolve, waiting.reject)),
      );
    }
  }

  function next(): void {
    while (running < options.inFlight && queue.length > 0) {
      const batch = queue.splice(0, options.maxBatch);
      running += 1;
      void write(batch).finally(() => {
        running -= 1;
        next();
      });
    }
  }

  return (item) =>
    new Promise<Result>((resolve, reject) => {
      queue.push({ item, resolve, reject });
      next();
    });
}
