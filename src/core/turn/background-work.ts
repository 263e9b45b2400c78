/**
 * What a turn leaves behind that nobody waits on: the platform's cosmetic calls (a session's status, a working
 * indicator taken away). They never hold a worker slot or the end of a turn; they are tracked only so that
 * tests and benchmarks can wait until the platform saw them (`settled`).
 */
export class BackgroundWork {
  private readonly running = new Set<Promise<void>>();

  /** Keeps `work` until it settles; its failure is the caller's to have logged already. */
  add(work: Promise<unknown>): void {
    const tracked: Promise<void> = work.then(
      () => undefined,
      () => undefined,
    );
    this.running.add(tracked);
    void tracked.then(() => this.running.delete(tracked));
  }

  /** Resolves once everything added, and added meanwhile, has settled. */
  async settled(): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running]);
  }
}
