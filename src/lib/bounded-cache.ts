/**
 * A map of at most `maxEntries` entries, each with its own expiry (epoch milliseconds): a read
 * moves an entry to the back, a write past the bound drops the least recently used one.
 */
export class BoundedCache<V> {
  private readonly map = new Map<string, { value: V; expiresAt: number }>();

  constructor(readonly maxEntries: number) {}

  get size(): number {
    return this.map.size;
  }

  get(key: string, nowMs: number): V | undefined {
    const e = this.map.get(key);
    if (!e) return undefined;
    this.map.delete(key);
    if (nowMs >= e.expiresAt) return undefined;
    this.map.set(key, e);
    return e.value;
  }

  set(key: string, value: V, expiresAt: number): void {
    this.map.delete(key);
    this.map.set(key, { value, expiresAt });
    while (this.map.size > this.maxEntries) {
      const oldest = this.map.keys().next().value as string;
      this.map.delete(oldest);
    }
  }

  /** Drops one entry, or every entry for `*`. */
  drop(key: string): void {
    if (key === '*') this.map.clear();
    else this.map.delete(key);
  }
}
