// A run's record of its effects: what each effectful call did, as the tool reported it or as a
// lookup by idempotency key found it when the call was cut off. Pure; agent.ts keeps the list.
import type { EffectCounts, EffectEntry, EffectOutcome, Observation, ReconcileOutput } from '../../common/types';
import { EFFECT_OUTCOMES } from '../../common/types';

export interface EffectCall {
  tool: string;
  idempotency_key: string;
  step: number;
  args: Record<string, unknown>;
}

function amountOf(args: Record<string, unknown>): number {
  return typeof args.amount_usd === 'number' ? args.amount_usd : 0;
}

/** The tool answered: its observation says what the system of record decided. */
export function effectFromObservation(call: EffectCall, observation: Observation, outcomeByOk = false): EffectEntry {
  const data = (observation.data ?? {}) as {
    refund?: { refund_id?: unknown; state?: unknown };
    rejected?: unknown;
    error?: unknown;
  };
  const refund = data.refund;
  let state: EffectOutcome;
  let detail: string | undefined;
  if (refund?.state === 'confirmed') state = 'confirmed';
  else if (refund?.state === 'rejected') {
    // A record an ended run voided (found again by a re-run under the same key) moved no money.
    state = data.rejected === 'voided' ? 'not_made' : 'rejected';
    detail = typeof data.rejected === 'string' ? data.rejected : undefined;
  } else if (refund === undefined && typeof data.rejected === 'string') {
    state = 'not_made'; // refused before it reached the service (e.g. not the principal)
    detail = data.rejected;
  } else if (outcomeByOk && observation.ok)
    state = 'confirmed'; // a write that reports its result
  else if (outcomeByOk && typeof data.error === 'string') {
    state = 'rejected'; // the system of record refused it (a domain error)
    detail = data.error;
  } else state = 'ambiguous';
  return {
    tool: call.tool,
    idempotency_key: call.idempotency_key,
    state,
    amount_usd: amountOf(call.args),
    step: call.step,
    via: 'tool',
    ...(typeof refund?.refund_id === 'number' ? { refund_id: refund.refund_id } : {}),
    ...(detail !== undefined ? { detail: detail.slice(0, 200) } : {}),
  };
}

/** The call was cut off or failed: the lookup by key settled it (or could not: ambiguous). */
export function effectFromReconcile(call: EffectCall, found: ReconcileOutput | { error: string }): EffectEntry {
  const base = { tool: call.tool, idempotency_key: call.idempotency_key, step: call.step, via: 'reconcile' as const };
  if ('error' in found) {
    return {
      ...base,
      state: 'ambiguous',
      amount_usd: amountOf(call.args),
      detail: `lookup failed: ${found.error}`.slice(0, 200),
    };
  }
  return {
    ...base,
    state: found.state,
    amount_usd: found.amount_usd ?? amountOf(call.args),
    ...(found.refund_id !== undefined ? { refund_id: found.refund_id } : {}),
    ...(found.detail !== undefined ? { detail: found.detail.slice(0, 200) } : {}),
  };
}

export function countEffects(effects: readonly EffectEntry[]): EffectCounts {
  const counts = Object.fromEntries(EFFECT_OUTCOMES.map((s) => [s, 0])) as EffectCounts;
  for (const e of effects) counts[e.state]++;
  return counts;
}

/** USD the run has refunded for sure: the principal gate adds it to a new refund's amount. */
export function confirmedUsd(effects: readonly EffectEntry[]): number {
  return effects.filter((e) => e.state === 'confirmed').reduce((sum, e) => sum + e.amount_usd, 0);
}
