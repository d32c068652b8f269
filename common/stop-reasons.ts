// Every way a run can end, in one table: the spelling (snake_case, a `:detail` suffix where a reason has one),
// a one-line description (what the CLI prints) and a family (what the CLI's exit code says).
// The StopReason type, the list of reasons and the checks below are all derived from it.
// A parametrised reason carries a name after a colon (tool_denied:search_policy, policy_denied:<rule>).

/** success: a final answer; stopped: a guard ended the run (budget, policy, loop, invalid output);
 *  cancelled: the kill switch; failed: the LLM or a tool failed on every attempt. */
export const STOP_REASON_FAMILIES = ['success', 'stopped', 'cancelled', 'failed'] as const;
export type StopReasonFamily = (typeof STOP_REASON_FAMILIES)[number];

interface StopReasonInfo {
  family: StopReasonFamily;
  description: string;
  /** Set for a parametrised reason: what follows the colon. */
  takes?: 'tool' | 'rule';
}

export const STOP_REASON_TABLE = {
  success: { family: 'success', description: 'the model gave a final answer' },
  max_steps: { family: 'stopped', description: 'the step budget (--max-steps) ran out' },
  max_tool_calls: { family: 'stopped', description: 'the tool-call budget (--max-tool-calls) ran out' },
  max_seconds: { family: 'stopped', description: 'the time budget (--max-seconds) ran out' },
  max_tokens: { family: 'stopped', description: 'the token budget (--max-tokens) ran out' },
  // The dollar budget cannot pay for even a final answer (the run wound down first).
  'budget_exhausted:usd': {
    family: 'stopped',
    description: 'the dollar budget (--max-usd) could not pay for another LLM call',
  },
  llm_timeout: { family: 'failed', description: 'the LLM did not answer in time, on every attempt' },
  llm_error: {
    family: 'failed',
    description: 'the LLM request failed for good (rejected, or failed on every attempt)',
  },
  loop_detected: {
    family: 'stopped',
    description: 'the model asked for the same tool call with the same arguments again',
  },
  cancelled: { family: 'cancelled', description: 'an operator cancelled the run' },
  // A conversation's own endings (common/conversation/conversation.ts): the customer's word, or their silence.
  customer_ended: { family: 'success', description: 'the customer ended the conversation' },
  transferred: {
    family: 'success',
    description:
      'the agent handed the conversation to a human agent (a hand-off tool such as transfer_to_human_agents)',
  },
  idle_timeout: {
    family: 'stopped',
    description: "the customer did not answer the agent's message in time (conversation idle timeout)",
  },
  approval_timeout: {
    family: 'stopped',
    description: 'nobody approved, rejected or answered in time (approval timeout)',
  },
  policy_denied: {
    family: 'stopped',
    takes: 'rule',
    description: 'the principal policy denied the call (see the README for the rule)',
  },
  tool_denied: { family: 'stopped', takes: 'tool', description: "the tool is not on the run's allowlist (--allow)" },
  tool_missing: {
    family: 'stopped',
    takes: 'tool',
    description: 'the tool is allowed but no such tool is registered',
  },
  tool_bad_args: { family: 'stopped', takes: 'tool', description: "the tool's arguments did not match its schema" },
  tool_error: { family: 'failed', takes: 'tool', description: 'the tool failed on every attempt' },
  'invalid_action:not_object': { family: 'stopped', description: "the model's answer was JSON but not an object" },
  'invalid_action:bad_json': { family: 'stopped', description: "the model's answer was not JSON" },
  'invalid_action:bad_kind': {
    family: 'stopped',
    description: 'the model\'s action had no valid "kind" (tool, final or escalate; message in a conversation)',
  },
  'invalid_action:extra_keys': {
    family: 'stopped',
    description: "the model's action had keys the contract does not allow",
  },
  'invalid_action:missing_answer': { family: 'stopped', description: "the model's final action had no answer" },
  'invalid_action:missing_tool_name': {
    family: 'stopped',
    description: "the model's tool action had no tool name",
  },
  'invalid_action:bad_args': {
    family: 'stopped',
    description: "the model's tool action had args that are not an object",
  },
  'invalid_action:missing_reason': { family: 'stopped', description: "the model's escalate action had no reason" },
  'invalid_action:missing_text': { family: 'stopped', description: "the model's message to the customer had no text" },
  // An answer above the decide activity's byte cap, or JSON nested deeper than
  // the contract allows. Either would otherwise bloat the history or blow the stack of hashing.
  'invalid_action:too_large': {
    family: 'stopped',
    description: "the model's answer was larger than the runtime keeps (only a preview was kept)",
  },
  'invalid_action:too_deep': { family: 'stopped', description: "the model's answer was JSON nested too deeply" },
  'invalid_action:bad_summary': {
    family: 'stopped',
    description: "the model's action had a decision_summary that is not a string",
  },
  // The final validator (common/validator/final-validator.ts), in enforce mode: the answer was bounced once.
  unsupported_answer: {
    family: 'stopped',
    description: 'the final answer stated figures no observation supports, twice (the final validator)',
  },
} as const satisfies Record<string, StopReasonInfo>;

type Table = typeof STOP_REASON_TABLE;
type Parametrised = { [K in keyof Table]: Table[K] extends { takes: string } ? K : never }[keyof Table];

/** A reason as a run reports it: a plain reason, or a parametrised one with its name. */
export type StopReason = Exclude<keyof Table, Parametrised> | `${Parametrised}:${string}`;
/** The table's keys: the spellings, parametrised ones without their name (`tool_denied`). */
export type StopReasonKey = keyof Table;

export const STOP_REASON_KEYS = Object.keys(STOP_REASON_TABLE) as StopReasonKey[];

export type InvalidActionKind = keyof Table extends infer K
  ? K extends `invalid_action:${infer Kind}`
    ? Kind
    : never
  : never;
export const INVALID_ACTION_KINDS = STOP_REASON_KEYS.filter((k) => k.startsWith('invalid_action:')).map((k) =>
  k.slice('invalid_action:'.length),
) as InvalidActionKind[];

const has = (key: string): key is StopReasonKey => Object.prototype.hasOwnProperty.call(STOP_REASON_TABLE, key);

/** The table entry a reason belongs to, or undefined for text that is no stop reason. */
function entryOf(reason: string): (StopReasonInfo & { key: StopReasonKey }) | undefined {
  if (has(reason)) {
    const info: StopReasonInfo = STOP_REASON_TABLE[reason];
    return info.takes ? undefined : { ...info, key: reason };
  }
  const colon = reason.indexOf(':');
  const key = reason.slice(0, colon);
  if (colon <= 0 || colon === reason.length - 1 || !has(key)) return undefined;
  const info: StopReasonInfo = STOP_REASON_TABLE[key];
  return info.takes ? { ...info, key } : undefined;
}

/** True for every reason a run may end with (used by tests that fuzz the runtime). */
export function isStopReason(value: unknown): value is StopReason {
  return typeof value === 'string' && entryOf(value) !== undefined;
}

/** success, stopped, cancelled or failed (the CLI's exit code); undefined for text that is no stop reason. */
export function stopReasonFamily(reason: string): StopReasonFamily | undefined {
  return entryOf(reason)?.family;
}

/** One line saying what a reason means, with the name of a parametrised one; unknown text as it is. */
export function stopReasonDescription(reason: string): string {
  const entry = entryOf(reason);
  if (!entry) return reason;
  return entry.takes ? `${entry.description}: ${reason.slice(entry.key.length + 1)}` : entry.description;
}

/**
 * A reason that carries a tool name the model chose (tool_denied:<name> and friends), split in two;
 * undefined for every other reason. Search attributes and metric labels keep registered names only.
 */
export function toolNamedReason(reason: string): { key: StopReasonKey; tool: string } | undefined {
  const colon = reason.indexOf(':');
  const key = reason.slice(0, colon);
  if (colon <= 0 || !has(key)) return undefined;
  const info: StopReasonInfo = STOP_REASON_TABLE[key];
  return info.takes === 'tool' ? { key, tool: reason.slice(colon + 1) } : undefined;
}

export const toolStop = {
  denied: (name: string): StopReason => `tool_denied:${safeToolName(name)}`,
  missing: (name: string): StopReason => `tool_missing:${safeToolName(name)}`,
  badArgs: (name: string): StopReason => `tool_bad_args:${safeToolName(name)}`,
  error: (name: string): StopReason => `tool_error:${safeToolName(name)}`,
};

/** The principal policy gate's denials carry the rule's name (workflows/agent/policy.ts). */
export const policyStop = (rule: string): StopReason => `policy_denied:${rule}`;

export const MAX_TOOL_NAME_CHARS = 64;

/**
 * A tool name as the model wrote it is untrusted: it ends up in stop reasons, the trace, search
 * attributes and log lines. Control characters and lone surrogates become '?', and long names are
 * cut (marked with '…').
 */
export function safeToolName(name: string): string {
  const cleaned = name.replace(/[\p{Cc}\p{Cs}\u2028\u2029]/gu, '?'); // controls and lone surrogates
  const chars = Array.from(cleaned); // by code point, so a cut never splits a surrogate pair
  return chars.length > MAX_TOOL_NAME_CHARS ? chars.slice(0, MAX_TOOL_NAME_CHARS).join('') + '…' : cleaned;
}
