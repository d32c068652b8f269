// A paid LLM attempt that failed, told to its run at once: the decide activity sends this Signal
// before the attempt reports its failure. Between two attempts (the retry backoff) no worker runs
// the decision, so a cancel or a deadline then ends it on the server with no report at all; the
// run still knows what its earlier attempts cost from these Signals. The run adds them once, with
// the decision's own ledger (the same attempt is counted once). Pure code (the Signal is defined in common/agent-messages.ts).
import type { AttemptCharge } from './budget';

/** Far above any real attempt; a bound so that no Signal can carry an absurd number into a result. */
const MAX_TOKENS = 100_000_000;
const MAX_USD = 100_000;
const FIELDS = ['step', 'attempt', 'outcome', 'prompt_tokens', 'completion_tokens', 'cost_usd'];

/** The charge, if `value` is one of the running decision's failed attempts; else why it is dropped. */
export function checkAttemptCharged(
  value: unknown,
  deciding: { step: number; maxAttempts: number } | undefined,
): AttemptCharge | string {
  if (!deciding) return 'no decision is running';
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'not an object';
  const v = value as Record<string, unknown>;
  const extra = Object.keys(v).find((key) => !FIELDS.includes(key));
  if (extra !== undefined) return `unknown field "${extra.slice(0, 40)}"`;
  if (v.step !== deciding.step) return `not the running decision's step (${deciding.step})`;
  if (!isCount(v.attempt, deciding.maxAttempts) || v.attempt === 0) return 'attempt out of range';
  if (v.outcome !== 'failed') return 'outcome must be "failed"';
  if (!isCount(v.prompt_tokens, MAX_TOKENS) || !isCount(v.completion_tokens, MAX_TOKENS)) return 'bad token counts';
  const usd = v.cost_usd;
  if (typeof usd !== 'number' || !Number.isFinite(usd) || usd < 0 || usd > MAX_USD) return 'bad cost_usd';
  return {
    step: deciding.step,
    attempt: v.attempt,
    outcome: 'failed',
    prompt_tokens: v.prompt_tokens,
    completion_tokens: v.completion_tokens,
    cost_usd: usd,
  };
}

function isCount(value: unknown, max: number): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 && value <= max;
}

/** A decision's ledger plus the Signalled attempts it lacks (the ledger's entry wins), by attempt. */
export function withSignalled(
  ledger: readonly AttemptCharge[],
  signalled: ReadonlyMap<number, AttemptCharge>,
): AttemptCharge[] {
  const known = new Set(ledger.map((a) => a.attempt));
  const missing = [...signalled.values()].filter((a) => !known.has(a.attempt));
  if (missing.length === 0) return [...ledger];
  return [...ledger, ...missing].sort((a, b) => a.attempt - b.attempt);
}
