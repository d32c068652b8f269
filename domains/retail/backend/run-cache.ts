// The last databases read or written, per conversation and version, in one worker process: a read
// of a version already seen does not parse about 2 MB of JSON again. Each entry is about 2 MB in
// memory, so only the latest few conversations are kept.
import type { RetailDB } from '../db';

const CACHED_RUNS = 16;

export interface VersionedDb {
  version: number;
  db: RetailDB;
}

export class RunCache {
  private readonly entries = new Map<string, VersionedDb>();

  /** The cached database of `runKey` when it is at `version`. */
  at(runKey: string, version: number): VersionedDb | undefined {
    const cached = this.entries.get(runKey);
    return cached?.version === version ? cached : undefined;
  }

  remember(runKey: string, entry: VersionedDb): void {
    this.entries.delete(runKey);
    this.entries.set(runKey, entry);
    if (this.entries.size > CACHED_RUNS) this.entries.delete(this.entries.keys().next().value!);
  }

  /** A write rolled back: the cached copy may be ahead of the stored one. */
  forget(runKey: string): void {
    this.entries.delete(runKey);
  }
}
