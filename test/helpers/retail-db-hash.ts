// get_db_hash after every call without dumping the whole database every time: the JSON of each order,
// product and user is kept and redone only for the entries a call may have changed, then joined exactly as
// json.dumps(db.model_dump(), sort_keys=True) joins them. The reference server keeps the same cache; both are
// checked against the full hash (getDbHash, the reference's get_db_hash) at the end of every task and
// sequence, so an entry changed without being named is found there.
import { createHash } from 'node:crypto';
import type { RetailDB } from '../../domains/retail/db';
import type { PyJson } from '../../domains/retail/python/json';
import { comparePyStr, pyJsonDumps, pyJsonString } from '../../domains/retail/python/json';

const COLLECTIONS = ['orders', 'products', 'users'] as const; // sorted, as sort_keys writes them

export class IncrementalDbHash {
  private readonly cache = new Map<string, string>();
  private readonly joined = new Map<string, string>();

  constructor(private db: RetailDB) {}

  use(db: RetailDB): void {
    this.db = db;
    this.cache.clear();
    this.joined.clear();
  }

  invalidate(collection: (typeof COLLECTIONS)[number], key: string): void {
    this.cache.delete(`${collection}\u0000${key}`);
    this.joined.delete(collection);
  }

  digest(): string {
    const parts: string[] = [];
    for (const collection of COLLECTIONS) {
      let joined = this.joined.get(collection);
      if (joined === undefined) {
        const entries = this.db[collection] as Record<string, unknown>;
        const dumped: string[] = [];
        for (const key of Object.keys(entries).sort(comparePyStr)) {
          const cacheKey = `${collection}\u0000${key}`;
          let text = this.cache.get(cacheKey);
          if (text === undefined) {
            text = pyJsonDumps(entries[key] as PyJson, { sortKeys: true });
            this.cache.set(cacheKey, text);
          }
          dumped.push(`${pyJsonString(key)}: ${text}`);
        }
        joined = dumped.join(', ');
        this.joined.set(collection, joined);
      }
      parts.push(`${pyJsonString(collection)}: {${joined}}`);
    }
    return createHash('sha256')
      .update(`{${parts.join(', ')}}`, 'utf8')
      .digest('hex');
  }
}
