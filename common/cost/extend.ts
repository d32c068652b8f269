// Top-ups: `agent extend ID --usd 0.50 --steps 5 --seconds 120 --reason "..."` sends the `extend`
// Update. The amounts are bounded and only raise budgets the run has (a run without a dollar or
// token budget is unlimited there: a top-up would lower that to its amount), a reason in visible
// text is required, and who sent it (as the client says: not authenticated) is recorded with it (the
// Update's arguments are in the history; the run's result lists every top-up). A run that waits for
// a top-up (topup_wait_seconds) resumes when one arrives. Pure code (the Update is defined in common/agent-messages.ts).
import { roundUsd } from './budget';
import type { Budget } from './budget';
import { hasControl, hasVisibleText } from '../text/visible-text';

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
  /**
   * The `extend` Update that granted it. Carried across continue-as-new with the top-up, so a repeat
   * of that Update (its answer lost) reaching a later run of the chain is answered, not granted again.
   */
  update_id?: string;
}

/** The top-ups as the result and the state Query report them: the Update ids stay in the chain's state. */
export function reportedExtensions(extensions: readonly BudgetExtension[]): BudgetExtension[] {
  return extensions.map(({ update_id, ...shown }) => (void update_id, shown));
}

export interface ExtendReceipt {
  budget: Budget;
  /** Which top-up this is (1 for the first). */
  extensions: number;
  /** A repeat of an Update the chain had granted: answered again, nothing more granted. */
  duplicate?: true;
}

const AMOUNTS = ['usd', 'steps', 'tool_calls', 'seconds', 'tokens'] as const;

/** What a top-up is checked against: the run as it is when the Update arrives. */
export interface ExtendTarget {
  /** Top-ups granted so far. */
  granted: number;
  running: boolean;
  /** The budget now (the operator's plus every top-up). */
  budget: Budget;
}

/** A budget of 0 in these means no limit: a top-up there would set one, not raise it. */
const UNLIMITED_WHEN_ZERO = { usd: ['max_usd', 'dollar'], tokens: ['max_tokens', 'token'] } as const;

/** The smallest dollar top-up: budgets keep nine decimals (roundUsd), so less could round the sum down. */
const MIN_USD = 1e-9;

/** One line saying what is wrong with a top-up, or undefined when it may be granted. */
export function checkExtend(request: unknown, run: ExtendTarget): string | undefined {
  if (!run.running) return 'the run has ended; a top-up cannot resume it';
  if (run.granted >= EXTEND_LIMITS.per_run) return `this run already has ${EXTEND_LIMITS.per_run} top-ups`;
  if (typeof request !== 'object' || request === null || Array.isArray(request)) return 'a top-up is an object';
  const r = request as Record<string, unknown>;
  const known = new Set<string>([...AMOUNTS, 'reason', 'operator']);
  const extra = Object.keys(r).find((k) => !known.has(k));
  if (extra !== undefined) return `unknown field ${JSON.stringify(extra.slice(0, 40))}`;
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
    if (key === 'usd' && value > 0 && value < MIN_USD)
      return 'usd must be at least 0.000000001 (budgets keep nine decimals)';
    if (key === 'usd' || key === 'tokens') {
      const [field, noun] = UNLIMITED_WHEN_ZERO[key];
      if (run.budget[field] === 0) return `this run has no ${noun} budget (${field}); a top-up cannot add one`;
    }
    if (value > 0) any = true;
  }
  if (!any) return 'a top-up needs at least one of usd, steps, tool_calls, seconds, tokens above 0';
  if (typeof r.reason !== 'string' || !readable(r.reason))
    return 'a top-up needs a reason: visible text, without control characters';
  if (r.reason.length > EXTEND_LIMITS.reason_chars)
    return `reason is longer than ${EXTEND_LIMITS.reason_chars} characters`;
  if (
    r.operator !== undefined &&
    (typeof r.operator !== 'string' || r.operator.length > EXTEND_LIMITS.operator_chars || !readable(r.operator))
  )
    return `operator must be visible text of at most ${EXTEND_LIMITS.operator_chars} characters`;
  return undefined;
}

function readable(text: string): boolean {
  return hasVisibleText(text) && !hasControl(text);
}

/**
 * The budget with every top-up added. Only a dollar top-up rounds the dollar budget (to nine
 * decimals), so one that names no dollars leaves an operator's finer max_usd exactly as it was.
 */
export function extendedBudget(base: Budget, extensions: readonly ExtendRequest[]): Budget {
  const budget = { ...base };
  for (const e of extensions) {
    if (e.usd) budget.max_usd = roundUsd(budget.max_usd + (e.usd ?? 0));
    budget.max_steps += e.steps ?? 0;
    budget.max_tool_calls += e.tool_calls ?? 0;
    budget.max_seconds += e.seconds ?? 0;
    if (budget.max_tokens > 0) budget.max_tokens += e.tokens ?? 0;
  }
  return budget;
}
