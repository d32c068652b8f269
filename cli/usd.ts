// Dollar amounts an operator types (--max-usd, --usd): plain decimals, no sign, no exponent.
import { UsageError } from './cli-args';

export function parseUsd(raw: string, flag: string, hint?: string): number {
  const text = raw.trim().replace(/^\$/, '');
  if (!/^\d+(\.\d+)?$/.test(text) || Number(text) <= 0)
    throw new UsageError(`${flag} must be a positive amount of dollars like 0.50, got ${JSON.stringify(raw)}`, hint);
  return Number(text);
}
