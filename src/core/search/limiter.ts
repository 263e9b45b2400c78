/** At most `perMinute` searches per person in any minute (in this process). */
export class SearchLimiter {
  private readonly recent = new Map<string, number[]>();

  constructor(
    private readonly perMinute: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts a search for `person`; false when they already made `perMinute` in the last minute. */
  admit(person: string): boolean {
    const now = this.now();
    const kept = (this.recent.get(person) ?? []).filter((at) => now - at < 60_000);
    if (kept.length >= this.perMinute) {
      this.recent.set(person, kept);
      return false;
    }
    kept.push(now);
    this.recent.set(person, kept);
    if (this.recent.size > 10_000) this.forgetIdle(now);
    return true;
  }

  private forgetIdle(now: number): void {
    for (const [person, times] of this.recent)
      if (times.every((at) => now - at >= 60_000)) this.recent.delete(person);
  }
}
