// Top-ups: `agent extend ID --usd 0.50 --steps 5 --seconds 120 --reason "..."` sends the `extend`
// Update. The amounts are bounded, a reason is required, and who sent it is recorded with it (the
// Update's arguments are in the history; the run's result lists every top-up). A run that waits for
// a top-up (topup_wait_seconds) resumes when one arrives. Pure code and the Update's definition.
import { defineUpdate } from '@temporalio/workflow';
import { roundUsd } from './budget';
import type { Budget } from './budget';

export const EXTEND_LIMITS = {
  usd: 1_000,
  steps: 1_000,
  tool_calls: 1_000,
  seconds: 86_400,
  tokens: 10_000_000,
  reason_chars: 500,
  operator_chars: 100,
  /** Top-ups per run chain: a runaway script cannot grow the history without bound. */
  per_run: 100,
} as const;

export interface ExtendRequest {
  usd?: number;
  steps?: number;
  tool_calls?: number;
  seconds?: number;
  tokens?: number;
  /** Why the run gets more: required, recorded. */
  reason: string;
  /** Who: AGENT_OPERATOR or $USER, set by the CLI. */
  operator?: string;
}

/** A granted top-up, as the run records it. */
export interface BudgetExtension extends ExtendRequest {
  /** The step the run had reached. */
  step: number;
  at: string;
}

export interface ExtendReceipt {
  budget: Budget;
  extensions: number;
}

export const extendUpdate = defineUpdate<ExtendReceipt, [ExtendRequest]>('extend');

export const EXTEND_UPDATE_DESCRIPTION =
  'Top up the run\'s budget: {"usd"?, "steps"?, "tool_calls"?, "seconds"?, "tokens"?, "reason", "operator"?}. ' +
  'Bounded amounts, a reason is required; a run waiting for a top-up resumes.';

const AMOUNTS = ['usd', 'steps', 'tool_calls', 'seconds', 'tokens'] as const;

/** One line saying what is wrong with a top-up, or undefined when it may be granted. */
export function checkExtend(request: unknown, granted: number, running: boolean): string | undefined {
  if (!running) return 'the run has ended; a top-up cannot resume it';
  if (granted >= EXTEND_LIMITS.per_run) return `this run already has ${EXTEND_LIMITS.per_run} top-ups`;
  if (typeof request !== 'object' || request === null || Array.isArray(request)) return 'a top-up is an object';
  const r = request as Record<string, unknown>;
  const known = new Set<string>([...AMOUNTS, 'reason', 'operator']);
  const extra = Object.keys(r).find((k) => !known.has(k));
  if (extra !== undefined) return `unknown field "${extra.slice(0, 40)}"`;
  let any = false;
  for (const key of AMOUNTS) {
    const value = r[key];
    if (value === undefined) continue;
    const max = EXTEND_LIMITS[key];
    const whole = key !== 'usd';
    if (
      typeof value !== 'number' ||
      !Number.isFinite(value) ||
      value < 0 ||
      value > max ||
      (whole && !Number.isInteger(value))
    )
      return `${key} must be ${whole ? 'a whole number' : 'a number'} from 0 to ${max}`;
    if (value > 0) any = true;
  }
  if (!any) return 'a top-up needs at least one of usd, steps, tool_calls, seconds, tokens above 0';
  if (typeof r.reason !== 'string' || r.reason.trim() === '') return 'a top-up needs a reason';
  if (r.reason.length > EXTEND_LIMITS.reason_chars)
    return `reason is longer than ${EXTEND_LIMITS.reason_chars} characters`;
  if (r.operator !== undefined && (typeof r.operator !== 'string' || r.operator.length > EXTEND_LIMITS.operator_chars))
    return `operator must be text of at most ${EXTEND_LIMITS.operator_chars} characters`;
  return undefined;
}

/** The budget with every top-up added. */
export function extendedBudget(base: Budget, extensions: readonly ExtendRequest[]): Budget {
  const budget = { ...base };
  for (const e of extensions) {
    budget.max_usd = roundUsd(budget.max_usd + (e.usd ?? 0));
    budget.max_steps += e.steps ?? 0;
    budget.max_tool_calls += e.tool_calls ?? 0;
    budget.max_seconds += e.seconds ?? 0;
    if (budget.max_tokens > 0) budget.max_tokens += e.tokens ?? 0;
  }
  return budget;
}
