/**
 * A small cache: entries live `ttlMs`, and past `maxEntries` the oldest go first. `has` tells a stored
 * `undefined` (a remembered "nothing") from a missing entry.
 */
export class ExpiringMap<K, V> {
  private readonly entries = new Map<K, { value: V; expiresAt: number }>();

  constructor(private readonly options: { ttlMs: number; maxEntries: number; now?: () => number }) {}

  private now(): number {
    return this.options.now?.() ?? Date.now();
  }

  has(key: K): boolean {
    const entry = this.entries.get(key);
    if (!entry) return false;
    if (entry.expiresAt > this.now()) return true;
    this.entries.delete(key);
    return false;
  }

  get(key: K): V | undefined {
    return this.has(key) ? this.entries.get(key)?.value : undefined;
  }

  delete(key: K): void {
    this.entries.delete(key);
  }

  set(key: K, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, { value, expiresAt: this.now() + this.options.ttlMs });
    while (this.entries.size > this.options.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      this.entries.delete(oldest.value);
    }
  }
}
