// Every way a run can end. Spellings follow the seeds; new reasons use the same style.
// Parametrised reasons carry the tool name after a colon (tool_denied:search_policy).

export const INVALID_ACTION_KINDS = [
  'not_object',
  'bad_json',
  'bad_kind',
  'extra_keys',
  'missing_answer',
  'missing_tool_name',
  'bad_args',
  'missing_reason',
  // Not in the seeds: an answer above the decide activity's byte cap, or JSON nested deeper than
  // the contract allows. Either would otherwise bloat the history or blow the stack of hashing.
  'too_large',
  'too_deep',
] as const;
export type InvalidActionKind = (typeof INVALID_ACTION_KINDS)[number];

export type StopReason =
  | 'success'
  | 'max_steps'
  | 'max_tool_calls'
  | 'max_seconds'
  | 'max_tokens'
  | 'llm_timeout'
  | 'llm_error'
  | 'loop_detected'
  | 'cancelled'
  | 'approval_timeout'
  | `tool_denied:${string}`
  | `tool_missing:${string}`
  | `tool_bad_args:${string}`
  | `tool_error:${string}`
  | `policy_denied:${string}`
  | `invalid_action:${InvalidActionKind}`;

export const toolStop = {
  denied: (name: string): StopReason => `tool_denied:${safeToolName(name)}`,
  missing: (name: string): StopReason => `tool_missing:${safeToolName(name)}`,
  badArgs: (name: string): StopReason => `tool_bad_args:${safeToolName(name)}`,
  error: (name: string): StopReason => `tool_error:${safeToolName(name)}`,
};

/** The principal policy gate's denials carry the rule's name (workflows/policy.ts). */
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

const PLAIN_REASONS: readonly string[] = [
  'success',
  'max_steps',
  'max_tool_calls',
  'max_seconds',
  'max_tokens',
  'llm_timeout',
  'llm_error',
  'loop_detected',
  'cancelled',
  'approval_timeout',
];
const TOOL_REASON_PREFIXES = ['tool_denied:', 'tool_missing:', 'tool_bad_args:', 'tool_error:', 'policy_denied:'];

/** True for every reason a run may end with (used by tests that fuzz the runtime). */
export function isStopReason(value: unknown): value is StopReason {
  if (typeof value !== 'string') return false;
  if (PLAIN_REASONS.includes(value)) return true;
  if (value.startsWith('invalid_action:'))
    return (INVALID_ACTION_KINDS as readonly string[]).includes(value.slice('invalid_action:'.length));
  const prefix = TOOL_REASON_PREFIXES.find((p) => value.startsWith(p));
  return prefix !== undefined && value.length > prefix.length;
}
