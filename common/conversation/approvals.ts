// Approvals: a person in the loop. A tool marked needsApproval, or a model that escalates, pauses
// the run until an operator answers through the `approval` Update (agent approve / reject /
// answer). The validator rejects answers that do not match what is pending, so an operator
// approves the exact call (tool, arguments, amount) they were shown; a duplicated answer is
// harmless. Pure code; the Update is defined in common/agent-messages.ts, the waiting lives in agent.ts.
import { argsHash, stableJson } from '../tools/hash';
import type { Observation } from '../tools/observation';
import { utf8Length } from '../text/utf8';
import { hasVisibleText } from '../text/visible-text';

export const DEFAULT_APPROVAL_TIMEOUT_SECONDS = 3600;
export const APPROVAL_TEXT_MAX_CHARS = 2000;

export type ApprovalDecision = 'approve' | 'reject' | 'answer';
export const APPROVAL_DECISIONS: readonly ApprovalDecision[] = ['approve', 'reject', 'answer'];

/** What awaits a person; `agent status` shows it and the `state` query returns it. */
export interface PendingApproval {
  /** What the operator answers: `<step>-<tool>-<args hash>` or `<step>-escalate`. */
  id: string;
  kind: 'tool_call' | 'escalation';
  step: number;
  /** tool_call: the exact call that would run. */
  tool?: string;
  args?: Record<string, unknown>;
  args_hash?: string;
  amount_usd?: number;
  /** escalation: why the model handed over. */
  reason?: string;
  requested_at: string;
  expires_at: string;
}

/** The Update's argument. Optional fields, when given, must match what is pending. */
export interface ApprovalAnswer {
  id: string;
  decision: ApprovalDecision;
  /** reject: why (the model sees it). */
  reason?: string;
  /** answer: the person's reply to an escalation (the model sees it). */
  text?: string;
  tool?: string;
  args_hash?: string;
  amount_usd?: number;
  /** Who answered, for the trace. */
  operator?: string;
}

export interface ApprovalReceipt {
  id: string;
  decision: ApprovalDecision;
  /** True when this id had already been answered the same way: nothing changed. */
  duplicate: boolean;
  pending: PendingApproval;
}

export function approvalTimeoutMs(seconds: number | undefined): number {
  const s = seconds ?? DEFAULT_APPROVAL_TIMEOUT_SECONDS;
  if (!Number.isFinite(s) || s <= 0)
    throw new RangeError(`approval_timeout_seconds must be a positive number, got ${String(seconds)}`);
  return s * 1000;
}

export function toolCallApprovalId(step: number, tool: string, hash: string): string {
  return `${step}-${tool}-${hash}`;
}

export function escalationApprovalId(step: number): string {
  return `${step}-escalate`;
}

export interface AnsweredApproval {
  pending: PendingApproval;
  answer: ApprovalAnswer;
}

export type AnswerCheck =
  | { ok: true; duplicate: false; pending: PendingApproval }
  | { ok: true; duplicate: true; prior: AnsweredApproval }
  | { ok: false; error: string };

/**
 * The Update's validator, pure: is `raw` a well-formed answer to what is pending now (or a
 * harmless repeat of an answer already given)? The error strings are what the CLI prints.
 */
export function checkApprovalAnswer(
  raw: unknown,
  pending: PendingApproval | undefined,
  answered: ReadonlyMap<string, AnsweredApproval>,
): AnswerCheck {
  const fail = (error: string): AnswerCheck => ({ ok: false, error });
  const shape = readAnswer(raw);
  if (typeof shape === 'string') return fail(shape);
  const answer = shape;

  const prior = answered.get(answer.id);
  if (prior) {
    if (prior.answer.decision === answer.decision) return { ok: true, duplicate: true, prior };
    return fail(`${answer.id} was already answered: ${prior.answer.decision}`);
  }
  if (!pending) return fail('nothing is awaiting approval in this run');
  if (pending.id !== answer.id) return fail(`${answer.id} is not what awaits approval (pending: ${pending.id})`);
  if (answer.tool !== undefined && answer.tool !== pending.tool) {
    return fail(`tool ${answer.tool} does not match the pending call (${pending.tool ?? 'an escalation'})`);
  }
  if (answer.args_hash !== undefined && answer.args_hash !== pending.args_hash) {
    return fail(`arguments ${answer.args_hash} do not match the pending call (${pending.args_hash ?? 'none'})`);
  }
  if (answer.amount_usd !== undefined && answer.amount_usd !== pending.amount_usd) {
    return fail(`amount ${answer.amount_usd} does not match the pending call (${pending.amount_usd ?? 'none'})`);
  }
  if (answer.decision === 'answer' && pending.kind !== 'escalation') {
    return fail(`${pending.id} is a tool call: approve or reject it (only an escalation takes an answer)`);
  }
  return { ok: true, duplicate: false, pending };
}

function readAnswer(raw: unknown): ApprovalAnswer | string {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return 'the answer must be an object';
  const a = raw as Record<string, unknown>;
  const known = ['id', 'decision', 'reason', 'text', 'tool', 'args_hash', 'amount_usd', 'operator'];
  const extra = Object.keys(a).filter((k) => !known.includes(k));
  if (extra.length) return `unknown field(s) in the answer: ${extra.join(', ')}`;
  if (typeof a.id !== 'string' || a.id.length === 0 || a.id.length > 200)
    return 'the answer needs the id of the pending call';
  if (typeof a.decision !== 'string' || !(APPROVAL_DECISIONS as readonly string[]).includes(a.decision)) {
    return `decision must be one of ${APPROVAL_DECISIONS.join(', ')}`;
  }
  for (const field of ['reason', 'text', 'tool', 'args_hash', 'operator'] as const) {
    const v = a[field];
    if (v !== undefined && (typeof v !== 'string' || v.length > APPROVAL_TEXT_MAX_CHARS)) {
      return `${field} must be a string of at most ${APPROVAL_TEXT_MAX_CHARS} characters`;
    }
  }
  if (a.amount_usd !== undefined && (typeof a.amount_usd !== 'number' || !Number.isFinite(a.amount_usd)))
    return 'amount_usd must be a number';
  if (a.decision === 'answer' && (typeof a.text !== 'string' || !hasVisibleText(a.text)))
    return 'an answer needs visible text';
  return a as unknown as ApprovalAnswer;
}

/** What the model sees after a person answered: an observation from the operator, not a crash. */
export function personObservation(pending: PendingApproval, answer: ApprovalAnswer): Observation {
  const tool = pending.kind === 'escalation' ? 'escalate' : pending.tool!;
  const data =
    answer.decision === 'reject'
      ? { rejected: answer.reason?.trim() || 'rejected by operator' }
      : answer.decision === 'answer'
        ? { answer: answer.text!.trim() }
        : { approved: true };
  const json = stableJson(data);
  return {
    tool,
    ok: answer.decision !== 'reject',
    data,
    source: 'operator',
    bytes: utf8Length(json),
    truncated: false,
  };
}

/** The escalation's own args hash, for the trace. */
export function escalationHash(reason: string): string {
  return argsHash({ reason });
}
