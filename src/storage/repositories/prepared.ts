/**
 * Hot statements are prepared once (drizzle then neither rebuilds them nor lets the database parse and
 * plan them per call) and lazily: repositories bound to a transaction are created per transaction and
 * usually need none of them.
 */
export function preparedOnFirstUse<T>(prepare: () => T): () => T {
  let statement: T | undefined;
  return () => {
    statement ??= prepare();
    return statement;
  };
}
