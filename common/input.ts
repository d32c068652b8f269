// The workflow's input, validated once at its entry (and by the CLI before it starts a run). Every
// number has a floor and a ceiling: a value a timer or a loop cannot take would otherwise throw
// inside workflow code, and a workflow task that throws is retried forever (a run no cancel ends).
import { z } from 'zod';
import { TOOL_REGISTRY } from './tool-catalog';
import { VALIDATOR_MODES } from './final-validator';
import type { AgentInput } from './types';

const DAY_SECONDS = 86_400;

/** Ceilings, chosen so that timers, counters and histories stay far inside Temporal's limits. */
export const INPUT_LIMITS = {
  goal_chars: 20_000,
  max_steps: 100_000,
  max_tool_calls: 100_000,
  /** 30 days: longer agent work should be a series of runs. */
  max_seconds: 30 * DAY_SECONDS,
  max_tokens: 1_000_000_000,
  /** Dollars: a budget, not a bank. */
  max_usd: 100_000,
  /** 30 days: how long a run may wait for a top-up. */
  topup_wait_seconds: 30 * DAY_SECONDS,
  llm_max_attempts: 20,
  continue_as_new_every: 1_000,
  /** 30 days: a person who has not answered by then is not coming. */
  approval_timeout_seconds: 30 * DAY_SECONDS,
} as const;

const int = (min: number, max: number) => z.number().int().min(min).max(max);
const userId = int(1, 2_147_483_647);

const budgetSchema = z.strictObject({
  max_steps: int(1, INPUT_LIMITS.max_steps).optional(),
  max_tool_calls: int(1, INPUT_LIMITS.max_tool_calls).optional(),
  max_seconds: int(1, INPUT_LIMITS.max_seconds).optional(),
  /** 0 = no token limit. */
  max_tokens: int(0, INPUT_LIMITS.max_tokens).optional(),
  /** 0 = no dollar limit. */
  max_usd: z.number().finite().min(0).max(INPUT_LIMITS.max_usd).optional(),
});

const knownTool = z.string().refine((name) => Object.prototype.hasOwnProperty.call(TOOL_REGISTRY, name), {
  error: (issue) =>
    `unknown tool "${String(issue.input).slice(0, 64)}" (known: ${Object.keys(TOOL_REGISTRY).join(', ')})`,
});

/**
 * What a run carries into the next when it continues as new. Loose on purpose (it is written by
 * the workflow itself, and by older versions of it); the entry check below makes sure a client
 * cannot send it.
 */
const carriedSchema = z.object({
  started_at_ms: z.number().finite(),
  // Numbers, and the bounded per-attempt detail (usage.attempts).
  usage: z.record(z.string(), z.union([z.number(), z.array(z.unknown())])),
  trace: z.array(z.unknown()),
  history: z.array(z.unknown()),
  seen_calls: z.array(z.string()),
  human_wait_ms: z.number().finite().nonnegative().optional(),
});

export const agentInputSchema = z.strictObject({
  goal: z.string().trim().min(1, 'the goal must not be empty').max(INPUT_LIMITS.goal_chars),
  user_id: userId,
  budget: budgetSchema.optional(),
  allow: z
    .array(knownTool)
    .max(Object.keys(TOOL_REGISTRY).length * 4)
    .refine((names) => new Set(names).size === names.length, 'allow lists a tool twice'),
  llm_max_attempts: int(1, INPUT_LIMITS.llm_max_attempts).optional(),
  search_attributes: z.boolean().optional(),
  continue_as_new_every: int(1, INPUT_LIMITS.continue_as_new_every).optional(),
  approval_timeout_seconds: int(1, INPUT_LIMITS.approval_timeout_seconds).optional(),
  topup_wait_seconds: int(1, INPUT_LIMITS.topup_wait_seconds).optional(),
  validator: z.enum(VALIDATOR_MODES).optional(),
  carried: carriedSchema.passthrough().optional(),
});

export type InputCheck = { ok: true; input: AgentInput } | { ok: false; error: string };

/** One line an operator can act on: the first problem, with its path ("budget.max_steps: ..."). */
export function checkAgentInput(raw: unknown): InputCheck {
  const parsed = agentInputSchema.safeParse(raw);
  if (parsed.success) return { ok: true, input: raw as AgentInput };
  const issue = parsed.error.issues[0]!;
  const where = issue.path.length > 0 ? `${issue.path.map(String).join('.')}: ` : '';
  return { ok: false, error: `invalid run input: ${where}${oneLine(issue.message)}` };
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim().slice(0, 300);
}
