// τ²-bench's get_db_hash: sha256 of json.dumps(db.model_dump(), sort_keys=True), the end-state criterion of a
// task. Written byte for byte as Python writes it (python/json.ts); the text is ASCII (ensure_ascii).
import { sha256 } from '@noble/hashes/sha256';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils';
import type { RetailDB } from './db';
import type { PyJson } from './python/json';
import { pyJsonDumps } from './python/json';

/** json.dumps(db.model_dump(), sort_keys=True). */
export function dbJson(db: RetailDB): string {
  return pyJsonDumps(db as unknown as PyJson, { sortKeys: true });
}

/** get_db_hash(): the sha256 hex digest of dbJson(db). */
export function getDbHash(db: RetailDB): string {
  return bytesToHex(sha256(utf8ToBytes(dbJson(db))));
}
