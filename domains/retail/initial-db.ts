// The database every τ²-bench retail task starts from (data/db.json, from sierra-research/tau2-bench, MIT:
// data/LICENSE).
import stored from './data/db.json';
import type { RetailDB } from './db';
import { parseRetailDb, snapshot } from './db';

let initial: RetailDB | undefined;

/** A fresh copy of the initial database (validated once, then copied). */
export function loadRetailDb(): RetailDB {
  initial ??= parseRetailDb(stored);
  return snapshot(initial);
}
