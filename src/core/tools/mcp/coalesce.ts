/**
 * Wraps a task so that calls made while it runs cause one more run after it, not one run each: a burst of
 * `list_changed` notifications costs two listings, and the last one sees the final state.
 */
export function coalesce(task: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | undefined;
  let again = false;
  const run = async () => {
    do {
      again = false;
      await task();
    } while (again);
  };
  return () => {
    if (running) {
      again = true;
      return running;
    }
    running = run().finally(() => {
      running = undefined;
    });
    return running;
  };
}
