// How many requests a server process saw with each idempotency key: a repeat is a client's retry,
// so an effect's drill stalls the first attempt only (as in a worker). Bounded: the oldest keys go.
const MAX_KEYS = 10_000;

export class KeyAttempts {
  private readonly seen = new Map<string, number>();

  /** This request's attempt for `key`, from 1. */
  next(key: string): number {
    const attempt = (this.seen.get(key) ?? 0) + 1;
    this.seen.delete(key); // re-inserted last: the map's order is the eviction order
    this.seen.set(key, attempt);
    if (this.seen.size > MAX_KEYS) this.seen.delete(this.seen.keys().next().value!);
    return attempt;
  }
}
