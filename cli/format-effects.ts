// How operators see a run's effects (calls that move money): each with its reconciled state, and
// an `ambiguous` one loudly, because then money may have moved and only the refunds service knows.
import { EFFECT_OUTCOMES } from '../common/types';
import type { EffectCounts, EffectEntry } from '../common/types';
import { terminalSafe } from './terminal-text';

/** What an operator does about an ambiguous effect. */
export function ambiguousAdvice(key: string): string {
  return `money may have moved: check the refunds service for key ${key}`;
}

/** "step 2: issue_refund USD 49.00 confirmed (refund #7, key wf:2:issue_refund:ab12)". */
export function formatEffect(e: EffectEntry): string {
  const what = `step ${e.step}: ${e.tool} USD ${Number(e.amount_usd).toFixed(2)}`;
  if (e.state === 'ambiguous') {
    return terminalSafe(`${what} AMBIGUOUS${e.detail ? ` (${e.detail})` : ''}: ${ambiguousAdvice(e.idempotency_key)}`);
  }
  const facts = [
    e.refund_id !== undefined ? `refund #${e.refund_id}` : undefined,
    e.detail,
    `key ${e.idempotency_key}`,
  ].filter(Boolean);
  return terminalSafe(`${what} ${e.state} (${facts.join(', ')})`);
}

/** The effects block of a result or a status; nothing for a run without effects. */
export function formatEffects(effects: readonly EffectEntry[] | undefined): string[] {
  if (!effects || effects.length === 0) return [];
  const lines = ['effects:', ...effects.map((e) => `  ${formatEffect(e)}`)];
  const ambiguous = effects.filter((e) => e.state === 'ambiguous').length;
  if (ambiguous > 0)
    lines.push(
      `WARNING: ${ambiguous} effect(s) AMBIGUOUS: money may have moved; check the refunds service by the key(s) above`,
    );
  return lines;
}

/** The `agent_effects` memo, if it is one (a run from before it existed has none). */
export function effectCountsOf(memo: unknown): EffectCounts | undefined {
  if (typeof memo !== 'object' || memo === null) return undefined;
  const counts = {} as EffectCounts;
  for (const state of EFFECT_OUTCOMES) {
    const n = (memo as Record<string, unknown>)[state];
    counts[state] = typeof n === 'number' && Number.isSafeInteger(n) && n >= 0 ? n : 0;
  }
  return counts;
}

/** "1 AMBIGUOUS, 2 confirmed"; "none" when all are zero; "-" when unknown. Ambiguous first: it is the one to act on. */
export function formatEffectCounts(counts: EffectCounts | undefined | null): string {
  if (!counts) return '-';
  const order = ['ambiguous', 'confirmed', 'rejected', 'not_made'] as const;
  const parts = order.filter((s) => counts[s] > 0).map((s) => `${counts[s]} ${s === 'ambiguous' ? 'AMBIGUOUS' : s}`);
  return parts.length > 0 ? parts.join(', ') : 'none';
}
