// τ²'s get_db_hash of many databases that each differ from the initial one in a few entries: the
// Python JSON of every initial order, product and user is written once, and an entry is written again
// only where it differs from the initial entry (compared value by value, Python ints and -0.0 apart,
// which json.dumps writes differently). Same text, same sha256 as
// getDbHash (domains/retail/hash.ts), at a fraction of the cost: the suite hashes every expected
// state and every run's end state.
import { createHash } from 'node:crypto';
import type { RetailDB } from '../../domains/retail/db';
import { loadRetailDb } from '../../domains/retail/initial-db';
import { PythonInt } from '../../domains/retail/python/int';
import type { PyJson } from '../../domains/retail/python/json';
import { comparePyStr, pyJsonDumps, pyJsonString } from '../../domains/retail/python/json';

const COLLECTIONS = ['orders', 'products', 'users'] as const; // sorted, as sort_keys writes them

type Collection = (typeof COLLECTIONS)[number];

/**
 * Whether Python's JSON of the two values is the same text: equal strings, booleans and nulls, the same
 * numbers (Object.is: -0.0 is written apart), Python ints where ints, and the same keys in the same order.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return typeof a !== 'number' || Object.is(a, b);
  if (typeof a === 'number' || typeof b === 'number') return Object.is(a, b);
  if (a instanceof PythonInt || b instanceof PythonInt)
    return a instanceof PythonInt && b instanceof PythonInt && Object.is(a.value, b.value);
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (let i = 0; i < ka.length; i++) {
    const key = ka[i]!;
    if (key !== kb[i] || !sameJson((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]))
      return false;
  }
  return true;
}

export class DbHasher {
  private readonly initial = new Map<string, { entry: unknown; python: string }>();

  constructor(base: RetailDB = loadRetailDb()) {
    for (const collection of COLLECTIONS)
      for (const [key, entry] of Object.entries(base[collection]))
        this.initial.set(`${collection}\u0000${key}`, {
          entry,
          python: pyJsonDumps(entry as unknown as PyJson, { sortKeys: true }),
        });
  }

  /** sha256 of json.dumps(db.model_dump(), sort_keys=True). */
  hash(db: RetailDB): string {
    const parts = COLLECTIONS.map((collection) => `${pyJsonString(collection)}: {${this.joined(db, collection)}}`);
    return createHash('sha256')
      .update(`{${parts.join(', ')}}`, 'utf8')
      .digest('hex');
  }

  private joined(db: RetailDB, collection: Collection): string {
    const entries = db[collection] as Record<string, unknown>;
    return Object.keys(entries)
      .sort(comparePyStr)
      .map((key) => {
        const entry = entries[key];
        const known = this.initial.get(`${collection}\u0000${key}`);
        const python =
          known && sameJson(known.entry, entry) ? known.python : pyJsonDumps(entry as PyJson, { sortKeys: true });
        return `${pyJsonString(key)}: ${python}`;
      })
      .join(', ');
  }
}
