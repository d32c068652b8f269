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
  denied: (name: string): StopReason => `tool_denied:${name}`,
  missing: (name: string): StopReason => `tool_missing:${name}`,
  badArgs: (name: string): StopReason => `tool_bad_args:${name}`,
  error: (name: string): StopReason => `tool_error:${name}`,
};

/** The principal policy gate's denials carry the rule's name (workflows/policy.ts). */
export const policyStop = (rule: string): StopReason => `policy_denied:${rule}`;
