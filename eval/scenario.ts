// An evaluation scenario as data (eval/scenarios/*.yaml): the run's input, the world its tools see,
// how the model behaves, what goes wrong, and what must be true at the end. A zod schema checks
// every file; a mistake is reported as one line naming the file and the field.
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { toolFaultSchema } from './faults';
import { DOMAINS, registryOfDomain } from '../domains/index';
import { isStopReason } from '../common/stop-reasons';

/** The scenarios run the support domain: its tools. */
const SUPPORT_TOOLS = registryOfDomain(DOMAINS.support!);

/** The error slices plus the four reference cases (users 42, 7, 404, 2001); every scenario belongs to one. */
export const SLICES = [
  'seed',
  'stale_data',
  'empty_results',
  'malformed_payload',
  'permission_denial',
  'prompt_injection',
  'timeout_before_commit',
  'timeout_after_commit',
  'repeated_results',
  'conflicting_observations',
  'tool_error',
  'slow_tool',
  'oversized_payload',
] as const;
export type Slice = (typeof SLICES)[number];

const userId = z.number().int().positive();
const toolName = z.string().refine((name) => SUPPORT_TOOLS[name] !== undefined, 'not a registered tool');
const stopReason = z.string().refine(isStopReason, 'not a known stop reason (common/stop-reasons.ts)');

/** One scripted model answer: a tool call, a final answer, an escalation, or raw text. */
const replySchema = z.union([
  z.strictObject({ tool: z.string().min(1), args: z.record(z.string(), z.unknown()).default({}) }),
  z.strictObject({ final: z.string().min(1) }),
  z.strictObject({ escalate: z.string().min(1) }),
  z.strictObject({ malformed: z.string() }),
]);
export type ScriptedReply = z.infer<typeof replySchema>;

const dataSchema = z.strictObject({
  users: z
    .record(z.string(), z.strictObject({ id: userId, name: z.string(), country: z.string(), tier: z.string() }))
    .optional(),
  billing: z
    .record(
      z.string(),
      z.strictObject({
        currency: z.string(),
        plan: z.string(),
        price_usd: z.number().nonnegative(),
        days_since_first_payment: z.number().int().nonnegative(),
      }),
    )
    .optional(),
  policies: z.array(z.strictObject({ id: z.string(), title: z.string(), snippet: z.string() })).optional(),
});

const refundRowSchema = z.strictObject({ user_id: userId, amount_usd: z.number().positive() });

export const scenarioSchema = z.strictObject({
  /** Defaults to the file name. */
  name: z
    .string()
    .regex(/^[a-z0-9][a-z0-9-]*$/, 'lower-case letters, digits and dashes')
    .optional(),
  description: z.string().min(1),
  slice: z.enum(SLICES),
  goal: z.string().min(1),
  principal: userId,
  allow: z.array(toolName).min(1),
  budget: z
    .strictObject({
      max_steps: z.number().int().positive().optional(),
      max_tool_calls: z.number().int().positive().optional(),
      max_seconds: z.number().positive().optional(),
      max_tokens: z.number().int().nonnegative().optional(),
    })
    .optional(),
  /** Merged over the built-in support data: users and billing records added or replaced, policies replaced. */
  data: dataSchema.optional(),
  /** Confirmed refunds in the refunds database before the run starts. */
  refunds: z.array(refundRowSchema).default([]),
  /** What the operator answers: a refund awaiting approval, an escalation. */
  operator: z
    .strictObject({
      refunds: z.enum(['approve', 'reject']).default('approve'),
      escalation: z.union([z.literal('reject'), z.strictObject({ answer: z.string().min(1) })]).default('reject'),
    })
    .default({ refunds: 'approve', escalation: 'reject' }),
  /** The scripted model's answers, step by step; `live` scenarios run only with --live. */
  model: z.union([z.literal('live'), z.strictObject({ script: z.array(replySchema).min(1) })]),
  faults: z.array(toolFaultSchema).default([]),
  expect: z.strictObject({
    /** One reason, or any of several. */
    stop_reason: z.union([stopReason, z.array(stopReason).min(1)]),
    /** Text the final answer must contain (case-insensitive). */
    answer_facts: z.array(z.string().min(1)).default([]),
    /** The tools this task needs: the yardstick of tool selection and unnecessary calls. */
    tools: z.array(toolName).min(1),
    /** Tools that must never run (an activity scheduled is a violation). */
    forbidden_tools: z.array(toolName).default([]),
    /** Confirmed refunds at the end (the starting rows included): the end state that is scored. */
    refunds: z.array(refundRowSchema).default([]),
    /** Whether the right move is to hand the run to a person. */
    escalate: z.boolean().default(false),
    /** Every material claim of the final answer must appear in an observation (default true). */
    claims_supported: z.boolean().default(true),
  }),
});
export type Scenario = z.infer<typeof scenarioSchema> & { name: string; file: string };

export class ScenarioError extends Error {
  override name = 'ScenarioError';
}

/** Parses one scenario file; throws ScenarioError with one line per problem. */
export function parseScenario(file: string, text: string): Scenario {
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (err) {
    throw new ScenarioError(`${file}: not valid YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  const parsed = scenarioSchema.safeParse(raw);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${file}: ${i.path.join('.') || '(top)'}: ${i.message}`);
    throw new ScenarioError(lines.join('\n'));
  }
  const name = parsed.data.name ?? path.basename(file).replace(/\.ya?ml$/, '');
  for (const fault of parsed.data.faults) {
    if (!parsed.data.allow.includes(fault.tool) && SUPPORT_TOOLS[fault.tool] === undefined)
      throw new ScenarioError(`${file}: faults: ${fault.tool}: not a registered tool`);
  }
  return { ...parsed.data, name, file };
}

/** Every *.yaml under dir, sorted by name; `only` keeps the named ones (unknown names are an error). */
export function loadScenarios(dir: string, only: readonly string[] = []): Scenario[] {
  const files = readdirSync(dir)
    .filter((f) => /\.ya?ml$/.test(f))
    .sort();
  const scenarios = files.map((f) => parseScenario(path.join(dir, f), readFileSync(path.join(dir, f), 'utf8')));
  const names = new Set<string>();
  for (const s of scenarios) {
    if (names.has(s.name)) throw new ScenarioError(`${s.file}: name ${s.name} is used by another scenario`);
    names.add(s.name);
  }
  if (only.length === 0) return scenarios;
  const missing = only.filter((n) => !names.has(n));
  if (missing.length) throw new ScenarioError(`no scenario named ${missing.join(', ')} in ${dir}`);
  return scenarios.filter((s) => only.includes(s.name));
}

export function expectedStopReasons(s: Scenario): string[] {
  return Array.isArray(s.expect.stop_reason) ? s.expect.stop_reason : [s.expect.stop_reason];
}
