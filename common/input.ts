// The workflow's input, validated once at its entry (and by the CLI before it starts a run). Every
// number has a floor and a ceiling: a value a timer or a loop cannot take would otherwise throw
// inside workflow code, and a workflow task that throws is retried forever (a run no cancel ends).
import { sharedAcrossRuns } from './shared-across-runs';
import { z } from 'zod';
import { mcpConfigSchema } from './mcp/config';
import { conversationInputSchema } from './conversation/conversation';
import { VALIDATOR_MODES } from './validator/final-validator';

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
  /** Repeats of one read with nothing new in between: a handful is a double-check, more is a loop. */
  max_repeats: 100,
  /** 30 days: how long a run may wait for a top-up. */
  topup_wait_seconds: 30 * DAY_SECONDS,
  llm_max_attempts: 20,
  continue_as_new_every: 1_000,
  /** 30 days: a person who has not answered by then is not coming. */
  approval_timeout_seconds: 30 * DAY_SECONDS,
  /** An opaque id; the domain says what a valid one looks like. */
  principal_chars: 200,
  /** Names in an allowlist: each tool at most once, so a bound far above any catalog. */
  allow_entries: 1_000,
  /** The model's context budget (tokens): a floor that leaves room for the goal, a ceiling above any model's window. */
  context_tokens_min: 2_000,
  context_tokens: 2_000_000,
} as const;

const int = (min: number, max: number) => z.number().int().min(min).max(max);

const budgetSchema = sharedAcrossRuns('common/input:budgetSchema', () =>
  z.strictObject({
    max_steps: int(1, INPUT_LIMITS.max_steps).optional(),
    max_tool_calls: int(1, INPUT_LIMITS.max_tool_calls).optional(),
    max_seconds: int(1, INPUT_LIMITS.max_seconds).optional(),
    /** 0 = no token limit. */
    max_tokens: int(0, INPUT_LIMITS.max_tokens).optional(),
    /** 0 = no dollar limit. */
    max_usd: z.number().finite().min(0).max(INPUT_LIMITS.max_usd).optional(),
    /** Repeats of one read with nothing new in between before loop_detected; default 2, 0 = none. */
    max_repeats: int(0, INPUT_LIMITS.max_repeats).optional(),
  }),
);

/**
 * What a run carries into the next when it continues as new. Loose on purpose (it is written by
 * the workflow itself, and by older versions of it); the entry check below makes sure a client
 * cannot send it.
 */
const carriedSchema = sharedAcrossRuns('common/input:carriedSchema', () =>
  z.object({
    started_at_ms: z.number().finite(),
    // Numbers, and the bounded per-attempt detail (usage.attempts).
    usage: z.record(z.string(), z.union([z.number(), z.array(z.unknown())])),
    trace: z.array(z.unknown()),
    history: z.array(z.unknown()),
    seen_calls: z.array(z.string()),
    human_wait_ms: z.number().finite().nonnegative().optional(),
  }),
);

export const agentInputSchema = sharedAcrossRuns('common/input:agentInputSchema', () =>
  z.strictObject({
    goal: z.string().trim().min(1, 'the goal must not be empty').max(INPUT_LIMITS.goal_chars),
    /** The domain the run works in (domains/index.ts); default support. */
    domain: z.string().max(64).optional(),
    /**
     * The principal the run acts for: an opaque id, in the form the domain checks at entry. Absent in
     * a domain that learns it from authentication (retail).
     */
    principal: z.string().min(1, 'the principal must not be empty').max(INPUT_LIMITS.principal_chars).optional(),
    budget: budgetSchema.optional(),
    /** Tools the model may call; anything else is denied. */
    allow: z
      .array(z.string())
      .max(INPUT_LIMITS.allow_entries)
      .refine((names) => new Set(names).size === names.length, 'allow lists a tool twice'),
    /** Attempts per LLM decision (timeouts, 429, 5xx) before the run stops; default 3. */
    llm_max_attempts: int(1, INPUT_LIMITS.llm_max_attempts).optional(),
    /**
     * Set by the client when the namespace has the Agent* search attributes registered; only then
     * does the run upsert them (see common/temporal/search-attributes.ts).
     */
    search_attributes: z.boolean().optional(),
    /**
     * The model's context budget in estimated tokens (common/model-view/model-view.ts): past it the oldest tool
     * results are compacted in what the model reads; default DEFAULT_CONTEXT_TOKENS.
     */
    context_tokens: int(INPUT_LIMITS.context_tokens_min, INPUT_LIMITS.context_tokens).optional(),
    /** Continue-as-new after this many steps in one run (history hygiene); default 100. */
    continue_as_new_every: int(1, INPUT_LIMITS.continue_as_new_every).optional(),
    /** How long a call needing approval (or an escalation) waits for a person; default 3600. */
    approval_timeout_seconds: int(1, INPUT_LIMITS.approval_timeout_seconds).optional(),
    /**
     * Opt-in: when a budget runs out (or the run would wind down), wait this long for an operator's
     * `agent extend` before winding down or stopping; absent: no wait.
     */
    topup_wait_seconds: int(1, INPUT_LIMITS.topup_wait_seconds).optional(),
    /**
     * The final validator: off, warn or enforce (common/validator/final-validator.ts). Default: enforce when a
     * tool whose results state facts is allowed, warn otherwise.
     */
    validator: z.enum(VALIDATOR_MODES).optional(),
    /**
     * Present: the run is a conversation with a customer (common/conversation/conversation.ts): the model may send
     * messages, and the run waits for the customer's answers up to the idle timeout (default 3600 s).
     */
    conversation: conversationInputSchema.optional(),
    /**
     * MCP servers the run may use, and per tool what the gateway must know (common/mcp/config.ts);
     * tools the config does not allow are denied. Names environment variables, never secrets.
     */
    mcp: mcpConfigSchema.optional(),
    /** Set by the workflow itself when it continues as new. */
    carried: carriedSchema.passthrough().optional(),
  }),
);

export type InputCheck = { ok: true } | { ok: false; error: string };

/** What the domain adds to the schema (a Domain, common/domain.ts, is one). */
export interface InputRules {
  name: string;
  tools: readonly { name: string; needsConsent?: boolean }[];
  principal: { check: (principal: string) => string | undefined; fromAuthentication?: boolean };
}

/**
 * One line an operator can act on: the first problem, with its path ("budget.max_steps: ...").
 * The domain adds what the schema cannot know: its tool names and what its principal looks like.
 */
export function checkAgentInput(raw: unknown, domain: InputRules): InputCheck {
  const parsed = agentInputSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.length > 0 ? `${issue.path.map(String).join('.')}: ` : '';
    return { ok: false, error: `invalid run input: ${where}${oneLine(issue.message)}` };
  }
  const input = parsed.data;
  const known = domain.tools.map((tool) => tool.name);
  const unknown = input.allow.findIndex((name) => !known.includes(name));
  if (unknown >= 0) {
    const name = input.allow[unknown]!.slice(0, 64);
    return {
      ok: false,
      error: `invalid run input: allow.${unknown}: unknown tool "${oneLine(name)}" (known: ${known.join(', ')})`,
    };
  }
  return checkPrincipalAndConsent(input, domain);
}

/** The principal the domain expects (given, or learnt by authentication), and a customer for every consent. */
function checkPrincipalAndConsent(input: z.output<typeof agentInputSchema>, domain: InputRules): InputCheck {
  const fail = (error: string): InputCheck => ({ ok: false, error: `invalid run input: ${error}` });
  if (domain.principal.fromAuthentication) {
    if (input.principal !== undefined)
      return fail(`principal: the ${domain.name} domain learns whom it serves from authentication; give none`);
  } else {
    if (input.principal === undefined)
      return fail(`principal: the ${domain.name} domain needs one: whom the run acts for (none is assumed)`);
    const problem = domain.principal.check(input.principal);
    if (problem !== undefined) return fail(`principal: ${oneLine(problem)}`);
  }
  // A write that needs the customer's yes cannot run without a customer to ask.
  const consent = domain.tools.filter((t) => t.needsConsent && input.allow.includes(t.name)).map((t) => t.name);
  if (consent.length > 0 && input.conversation === undefined)
    return fail(
      `allow: ${consent.join(', ')} need${consent.length === 1 ? 's' : ''} the customer's consent: only a conversation (agent chat) can ask it`,
    );
  return { ok: true };
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim().slice(0, 300);
}
