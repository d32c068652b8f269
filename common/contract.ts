// The action contract: the only shapes a model answer may take. The model is untrusted input,
// so its text is parsed and checked here, inside the workflow, and anything else ends the run
// with an explicit invalid_action:* reason (one spelling and precedence, docs/runtime-semantics.md).
import { sharedAcrossRuns } from './shared-across-runs';
import { z } from 'zod';
import type { InvalidActionKind } from './stop-reasons';
import { hasVisibleText } from './text/visible-text';

const argsSchema = sharedAcrossRuns('common/contract:argsSchema', () => z.record(z.string(), z.unknown()));

export const toolActionSchema = sharedAcrossRuns('common/contract:toolActionSchema', () =>
  z.strictObject({
    kind: z.literal('tool'),
    name: z.string().min(1),
    args: argsSchema.nullish(),
  }),
);

export const finalActionSchema = sharedAcrossRuns('common/contract:finalActionSchema', () =>
  z.strictObject({
    kind: z.literal('final'),
    answer: z.string().refine((s) => s.trim().length > 0),
  }),
);

/** Hands the run to a person, who answers through the same approval update as a tool approval. */
export const escalateActionSchema = sharedAcrossRuns('common/contract:escalateActionSchema', () =>
  z.strictObject({
    kind: z.literal('escalate'),
    reason: z.string().refine((s) => s.trim().length > 0),
  }),
);

/**
 * A message to the customer: only in a conversation run (ContractOptions.message). Its text must
 * show, as a customer's must: a message of zero-width characters would leave the customer looking
 * at nothing while the run waits for an answer.
 */
export const messageActionSchema = sharedAcrossRuns('common/contract:messageActionSchema', () =>
  z.strictObject({
    kind: z.literal('message'),
    text: z.string().refine(hasVisibleText),
  }),
);

/**
 * decision_summary: an optional one-line summary of the action, in the model's words, for operators
 * (the trace's decision_summary). It is a label the model chose to write, not its reasoning, and is
 * as untrusted as the rest of the answer. Cut to DECISION_SUMMARY_MAX_CHARS; accepted only by runs
 * with the final-validator patch (before it, the key was extra_keys).
 */
export const DECISION_SUMMARY_MAX_CHARS = 160;
const decisionSummary = sharedAcrossRuns('common/contract:decisionSummary', () =>
  z.string().transform(boundedSummary).optional(),
);

const toolWithSummary = toolActionSchema.extend({ decision_summary: decisionSummary });
const finalWithSummary = finalActionSchema.extend({ decision_summary: decisionSummary });
const escalateWithSummary = escalateActionSchema.extend({ decision_summary: decisionSummary });
const messageWithSummary = messageActionSchema.extend({ decision_summary: decisionSummary });

interface Summarised {
  decision_summary?: string;
}
export type ToolAction = { kind: 'tool'; name: string; args: Record<string, unknown> } & Summarised;
export type FinalAction = { kind: 'final'; answer: string } & Summarised;
export type EscalateAction = { kind: 'escalate'; reason: string } & Summarised;
export type MessageAction = { kind: 'message'; text: string } & Summarised;
export type Action = ToolAction | FinalAction | EscalateAction | MessageAction;

export type ValidationResult = { ok: true; action: Action } | { ok: false; reason: InvalidActionKind; raw: unknown };

/** Deeper JSON is not an action (an action with its args is 3-4 levels); hashing it would recurse without bound. */
export const MAX_ACTION_DEPTH = 16;

/** What the contract accepts beyond its base shapes (absent: the base shapes exactly). */
export interface ContractOptions {
  /** Accept the optional decision_summary field. */
  summary?: boolean;
  /** Accept the message kind (a conversation run); elsewhere it is bad_kind. */
  message?: boolean;
}

/** Parses and validates the model's raw text. Never throws. */
export function validateAction(rawText: string, options: ContractOptions = {}): ValidationResult {
  let parsed: unknown;
  try {
    parsed = JSON.parse(rawText);
  } catch {
    return { ok: false, reason: 'bad_json', raw: rawText };
  }
  if (nestedDeeperThan(parsed, MAX_ACTION_DEPTH)) return { ok: false, reason: 'too_deep', raw: rawText };
  return validateParsedAction(parsed, options);
}

export function validateParsedAction(parsed: unknown, options: ContractOptions = {}): ValidationResult {
  if (nestedDeeperThan(parsed, MAX_ACTION_DEPTH))
    return { ok: false, reason: 'too_deep', raw: `(JSON nested deeper than ${MAX_ACTION_DEPTH})` };
  const fail = (reason: InvalidActionKind): ValidationResult => ({ ok: false, reason, raw: parsed });
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return fail('not_object');

  const kind = (parsed as Record<string, unknown>).kind;
  const summary = options.summary === true;
  const summaryOf = (data: object): Summarised => {
    const text = (data as Summarised).decision_summary;
    return text ? { decision_summary: text } : {};
  };
  if (kind === 'final') {
    const result = (summary ? finalWithSummary : finalActionSchema).safeParse(parsed);
    if (result.success)
      return { ok: true, action: { kind: 'final', answer: result.data.answer.trim(), ...summaryOf(result.data) } };
    return fail(firstReason(result.error, { answer: 'missing_answer', decision_summary: 'bad_summary' }));
  }
  if (kind === 'tool') {
    const result = (summary ? toolWithSummary : toolActionSchema).safeParse(parsed);
    if (result.success) {
      const { name, args } = result.data;
      return { ok: true, action: { kind: 'tool', name, args: args ?? {}, ...summaryOf(result.data) } };
    }
    return fail(
      firstReason(result.error, { name: 'missing_tool_name', args: 'bad_args', decision_summary: 'bad_summary' }),
    );
  }
  if (kind === 'escalate') {
    const result = (summary ? escalateWithSummary : escalateActionSchema).safeParse(parsed);
    if (result.success)
      return { ok: true, action: { kind: 'escalate', reason: result.data.reason.trim(), ...summaryOf(result.data) } };
    return fail(firstReason(result.error, { reason: 'missing_reason', decision_summary: 'bad_summary' }));
  }
  if (kind === 'message' && options.message === true) {
    const result = (summary ? messageWithSummary : messageActionSchema).safeParse(parsed);
    if (result.success)
      return { ok: true, action: { kind: 'message', text: result.data.text.trim(), ...summaryOf(result.data) } };
    return fail(firstReason(result.error, { text: 'missing_text', decision_summary: 'bad_summary' }));
  }
  return fail('bad_kind');
}

/** Iterative, so hostile nesting cannot overflow the stack here either. */
export function nestedDeeperThan(value: unknown, maxDepth: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (typeof current !== 'object' || current === null) continue;
    if (depth > maxDepth) return true;
    for (const child of Object.values(current)) stack.push([child, depth + 1]);
  }
  return false;
}

// Extra keys win over field errors: an answer with unknown keys is not the contract's at all.
function firstReason(error: z.ZodError, byField: Record<string, InvalidActionKind>): InvalidActionKind {
  if (error.issues.some((issue) => issue.code === 'unrecognized_keys')) return 'extra_keys';
  for (const [field, reason] of Object.entries(byField)) {
    if (error.issues.some((issue) => issue.path[0] === field)) return reason;
  }
  return 'bad_kind';
}

/** One line, control characters out, at most DECISION_SUMMARY_MAX_CHARS (cut marked with '…'). */
function boundedSummary(text: string): string {
  const chars = Array.from(text.replace(/[\p{Cc}\p{Cs}\u2028\u2029]/gu, ' ').trim());
  return chars.length > DECISION_SUMMARY_MAX_CHARS
    ? chars.slice(0, DECISION_SUMMARY_MAX_CHARS - 1).join('') + '…'
    : chars.join('');
}
