// A run's database is stored as JSON text. A Python int in a float field (PythonInt) hashes
// differently from the float in τ²-bench's database hash, so it is marked on the way in and revived
// on the way out: the stored database hashes like the reference's.
import type { RetailDB } from '../db';
import { PythonInt } from '../python/int';

const INT_MARK = '__python_int__';

function keepPythonInts(this: Record<string, unknown>, key: string, value: unknown): unknown {
  const original = this[key];
  return original instanceof PythonInt ? { [INT_MARK]: original.value } : value;
}

function revivePythonInts(_key: string, value: unknown): unknown {
  if (value !== null && typeof value === 'object' && INT_MARK in value)
    return new PythonInt((value as Record<string, number>)[INT_MARK]!);
  return value;
}

export function databaseToText(db: RetailDB): string {
  return JSON.stringify(db, keepPythonInts);
}

export function databaseFromText(text: string): RetailDB {
  // A reviver makes the parse about ten times slower, and most databases hold no mark at all (a text
  // without it parses to the same value either way): the eval reads one back for every run.
  if (!text.includes(`"${INT_MARK}"`)) return JSON.parse(text) as RetailDB;
  return JSON.parse(text, revivePythonInts) as RetailDB;
}
