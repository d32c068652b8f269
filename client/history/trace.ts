// A run's step events (the bounded event contract: step, decision, decisionSummary, tool,
// argumentDigest, policyDecision, observation {status, source, bytes}, remainingBudget), a view
// over what its workflow HISTORY alone says happened at each step (read-history.ts): the
// activities the workflow scheduled, their inputs and results, the approvals, and how the run
// closed. No worker, no query, no UI is needed, so a finished run can be audited from the record
// Temporal keeps. A continue-as-new chain is read as one run.
//
// Definitions:
//  - decision: tool_call | final | escalate (handed to a person) | message (to the customer of a
//    conversation) | invalid_action (the
//    model's text broke the contract) | no_decision (the LLM call failed, timed out, was cancelled).
//  - decisionSummary: the action's own decision_summary when the model wrote one (a short label it
//    chose, capped by the contract: a summary, not its reasoning), else the runtime's description.
//  - policyDecision: for a tool call, the gateway's; for a final answer, whether the runtime accepted
//    it (denied: the final validator refused it), with validator = supported | unsupported | unchecked
//    and, when refused, the unsupported claims. A refused answer's observation is the validator's own
//    (source runtime:final-validator), read from the next step's decide input, as the model saw it.
//  - approval: a person's answer to a call that needs one, or to an escalation (approve, reject,
//    answer), read from the completed `approval` Updates; `timeout` when nobody answered in time.
//    A rejection or an answer is that step's observation (source "operator").
//  - argumentDigest: sha256 of the key-order-free JSON (common/tools/hash.ts stableJson) of the
//    arguments the tool ran with (the gateway's normalised arguments), or, for a call the gateway
//    denied, of the arguments the model asked for. Its first 12 hex digits are the trace's args_hash.
//  - remainingBudget: what was left when the step ended (event time for the time budget).
//  - stopReason: on the last step of a run that has ended.
import { resolveBudget, roundUsd } from '../../common/cost/budget';
import { ledgerOf } from '../../common/cost/cost';
import type { AttemptCharge, Budget } from '../../common/cost/budget';
import { validateAction } from '../../common/contract';
import { argumentDigest } from '../../common/tools/hash';
import type {
  AgentResult,
  DecideInput,
  DecideOutput,
  FinalValidation,
  Observation,
  ToolInput,
} from '../../common/types';
import { VALIDATOR_SOURCE } from '../../common/validator/final-validator';
import type { ClaimText } from '../../common/validator/final-validator';
import { personObservation } from '../../common/conversation/approvals';
import { readRunHistory } from './read-history';
import type { DecodePayloads, HistoryEvent, RunHistory, StepEntry } from './read-history';

export type Decision = 'tool_call' | 'final' | 'escalate' | 'message' | 'invalid_action' | 'no_decision';
export type ObservationStatus = 'ok' | 'error' | 'failed' | 'timed_out' | 'cancelled' | 'not_run';

export interface StepEvent {
  step: number;
  decision: Decision;
  decisionSummary: string;
  tool?: string;
  argumentDigest?: string;
  policyDecision?: 'allowed' | 'denied';
  approval?: 'approve' | 'reject' | 'answer' | 'timeout';
  /** Final answers of runs with the final validator: its verdict, and the claims it found unsupported. */
  validator?: FinalValidation['verdict'];
  unsupportedClaims?: ClaimText[];
  observation?: { status: ObservationStatus; source?: string; bytes?: number; truncated?: boolean };
  remainingBudget: { steps: number; toolCalls: number; wallTimeMs: number; tokens: number | null };
  stopReason?: string;
}

/** Beside the step event contract (which stays key for key): what a step's LLM attempts cost, and its wind-down. */
export interface StepCost {
  step: number;
  /** What the step's LLM attempts cost (every attempt that reported usage), when the run priced them. */
  costUsd?: number;
  /** The decision was a wind-down (the model was asked for its final answer): the budget that ran low. */
  windDown?: string;
  /** The model read this decision with the oldest tool results compacted (common/model-view/model-view.ts): how many, before which step. */
  compacted?: { results: number; beforeStep: number };
}

export interface RunOutcome {
  workflowId: string;
  runIds: string[];
  /** Temporal's view: RUNNING, COMPLETED, CANCELLED, FAILED, TERMINATED, TIMED_OUT. */
  temporalStatus: string;
  /** The agent's view (ok | stopped), when the run ended with a result. */
  status?: 'ok' | 'stopped';
  stopReason?: string;
  answer?: string;
  budget: Budget;
  steps: number;
  toolCalls: number;
  totalTokens: number;
}

export interface RebuiltTrace {
  events: StepEvent[];
  outcome: RunOutcome;
  /** One entry per step that has a cost or a wind-down (runs recorded with cost accounting). */
  costs: StepCost[];
}

interface Draft {
  event: Omit<StepEvent, 'remainingBudget'>;
  /** Counters and time when the step last changed: its remaining budget is computed from them. */
  atMs: number;
  toolCalls: number;
  tokens: number;
  cost: Omit<StepCost, 'step'>;
}

/** `histories`: the runs of one workflow id, oldest first (one entry unless it continued as new). */
export async function rebuildTrace(
  workflowId: string,
  histories: Array<{ runId: string; events: HistoryEvent[] }>,
  decode: DecodePayloads,
): Promise<RebuiltTrace> {
  return traceOf(await readRunHistory(workflowId, histories, decode));
}

/** The step events of a run, from what its history says happened at each step. */
export function traceOf(history: RunHistory): RebuiltTrace {
  const steps = new StepDrafts();
  for (const entry of history.entries) steps.read(entry);
  const { temporalStatus, result } = history;
  const ended = temporalStatus !== 'RUNNING' && temporalStatus !== 'CONTINUED_AS_NEW';
  const last = steps.drafts[steps.drafts.length - 1];
  if (ended && result && last) steps.closeLast(last, result);

  const budget = resolveBudget(history.input?.budget);
  const startedAtMs = history.input?.carried?.started_at_ms ?? history.startedAtMs;
  return {
    events: steps.drafts.map((draft) => stepEvent(draft, budget, startedAtMs)),
    costs: steps.drafts
      .filter((d) => d.cost.costUsd !== undefined || d.cost.windDown !== undefined || d.cost.compacted !== undefined)
      .map((d) => ({ step: d.event.step, ...d.cost })),
    outcome: {
      workflowId: history.workflowId,
      runIds: history.runIds,
      temporalStatus: temporalStatus === 'CONTINUED_AS_NEW' ? 'RUNNING' : temporalStatus,
      status: ended ? result?.status : undefined,
      stopReason: ended
        ? (result?.stop_reason ?? (temporalStatus === 'CANCELLED' ? 'cancelled' : undefined))
        : undefined,
      answer: ended ? result?.answer : undefined,
      budget,
      steps: last?.event.step ?? 0,
      toolCalls: steps.toolCalls,
      totalTokens: steps.tokens,
    },
  };
}

type Entry<K extends StepEntry['kind']> = Extract<StepEntry, { kind: K }>;

/** The steps so far, in the order the history first names them, and the run's counters so far. */
class StepDrafts {
  readonly drafts: Draft[] = [];
  private readonly byStep = new Map<number, Draft>();
  /** Steps whose tool call passed the gateway (counted once, whether it then ran or not). */
  private readonly counted = new Set<number>();
  toolCalls = 0;
  tokens = 0;

  read(entry: StepEntry): void {
    if (entry.kind === 'approval') return this.answered(entry);
    const { role } = entry.activity;
    // A reconcile lookup does not change the step's event.
    if (role === 'reconcile') return;
    const decision = role === 'decide';
    if (entry.kind === 'scheduled') return decision ? this.decisionAsked(entry) : this.toolScheduled(entry);
    if (entry.kind === 'completed') return decision ? this.decided(entry) : this.toolCompleted(entry);
    return decision ? this.decisionEnded(entry) : this.toolEnded(entry);
  }

  /** A person's answer to a pending call or escalation. */
  private answered({ atMs, receipt, answer }: Entry<'approval'>): void {
    const draft = this.draftFor(receipt.pending.step, atMs);
    draft.event.approval = receipt.decision;
    if (receipt.pending.kind === 'tool_call') {
      draft.event.policyDecision = 'allowed';
      this.countCall(receipt.pending.step);
    }
    if (receipt.decision !== 'approve' && answer) {
      const observation = personObservation(receipt.pending, { ...answer, decision: receipt.decision });
      draft.event.observation = observed(observation.ok ? 'ok' : 'error', observation);
    } else if (receipt.pending.kind === 'tool_call') {
      draft.event.observation = { status: 'not_run' };
    }
    this.touch(draft, atMs);
  }

  /** What the decision was asked with: a wind-down, a compacted view, a refused final answer's observation. */
  private decisionAsked({ atMs, activity }: Entry<'scheduled'>): void {
    const draft = this.draftFor(activity.step, atMs);
    const input = activity.input as DecideInput | undefined;
    const windDown = input?.payload?.wind_down?.reason;
    if (typeof windDown === 'string') draft.cost.windDown = windDown;
    const view = input?.view;
    if (view && typeof view.compacted === 'number' && view.compacted > 0)
      draft.cost.compacted = { results: view.compacted, beforeStep: view.compact_before };
    // A final answer the validator refused: its observation is in this decide's input.
    for (const seen of input?.payload?.untrusted_observations?.steps ?? []) {
      const refused = this.byStep.get(seen.step);
      if (seen.observation?.source !== VALIDATOR_SOURCE || !refused) continue;
      refusedFinal(refused, claimsOf(seen.observation.data));
      refused.event.observation = observed('error', seen.observation);
    }
  }

  private toolScheduled({ atMs, activity }: Entry<'scheduled'>): void {
    this.countCall(activity.step);
    const draft = this.draftFor(activity.step, atMs);
    draft.event.tool = activity.name;
    draft.event.argumentDigest = digest((activity.input as ToolInput | undefined)?.args ?? {});
    draft.event.policyDecision = 'allowed';
    draft.event.observation = { status: 'not_run' };
    this.touch(draft, atMs);
  }

  private decided({ atMs, activity, result }: Entry<'completed'>): void {
    const draft = this.draftFor(activity.step, atMs);
    const output = result as DecideOutput;
    const charged = ledgerOf(output);
    this.tokens += output?.attempts ? tokensOf(charged) : (output?.usage?.total_tokens ?? 0);
    if (output?.attempts) draft.cost.costUsd = usdOf(charged);
    describeDecision(draft, output?.text ?? '');
    this.touch(draft, atMs);
  }

  private toolCompleted({ atMs, activity, result }: Entry<'completed'>): void {
    const draft = this.draftFor(activity.step, atMs);
    const observation = result as Observation | undefined;
    draft.event.observation = observed(observation?.ok ? 'ok' : 'error', observation);
    this.touch(draft, atMs);
  }

  private decisionEnded({ atMs, activity, how, message, details }: Entry<'ended'>): void {
    const draft = this.draftFor(activity.step, atMs);
    // The attempts the failed decision was charged for travel in its failure's details.
    const charged = details !== undefined ? ledgerOf(details) : [];
    if (charged.length > 0) {
      this.tokens += tokensOf(charged);
      draft.cost.costUsd = usdOf(charged);
    }
    draft.event.decision = 'no_decision';
    draft.event.decisionSummary =
      how === 'failed'
        ? `LLM call failed: ${firstLine(message ?? 'unknown error')}`
        : how === 'timed_out'
          ? 'LLM call timed out'
          : 'LLM call cancelled';
    this.touch(draft, atMs);
  }

  private toolEnded({ atMs, activity, how }: Entry<'ended'>): void {
    const draft = this.draftFor(activity.step, atMs);
    draft.event.observation = { status: how };
    this.touch(draft, atMs);
  }

  /** The run has ended with `result`: what it says about its last step. */
  closeLast(last: Draft, result: AgentResult): void {
    last.event.stopReason = result.stop_reason;
    // Nobody answered in time: the call had passed the gateway and counts as a tool call.
    if (result.stop_reason === 'approval_timeout') {
      last.event.approval = 'timeout';
      if (last.event.decision === 'tool_call') {
        last.event.policyDecision = 'allowed';
        this.countCall(last.event.step);
        last.toolCalls = this.toolCalls;
      }
      last.event.observation = { status: 'not_run' };
    }
    // The last final answer: the validator's verdict, when the run had the validator.
    if (last.event.decision === 'final') {
      if (result.stop_reason === 'unsupported_answer') {
        refusedFinal(last, result.validation?.unsupported_claims ?? []);
        last.event.observation = { status: 'not_run' };
      } else if (result.validation) {
        last.event.policyDecision = 'allowed';
        last.event.validator = result.validation.verdict;
        if (result.validation.unsupported_claims) last.event.unsupportedClaims = result.validation.unsupported_claims;
      }
    }
    // The contract refused the text (e.g. an escalate action before escalation existed): say so.
    if (result.stop_reason.startsWith('invalid_action:') && last.event.decision !== 'invalid_action') {
      last.event.decision = 'invalid_action';
      last.event.decisionSummary = `invalid action: ${result.stop_reason.slice('invalid_action:'.length)}`;
      delete last.event.tool;
      delete last.event.argumentDigest;
    }
    // A tool call the model asked for and the gateway refused: no activity was ever scheduled.
    if (last.event.decision === 'tool_call' && last.event.policyDecision === undefined && result.status === 'stopped') {
      last.event.policyDecision = 'denied';
      last.event.observation = { status: 'not_run' };
    }
  }

  private countCall(step: number): void {
    if (this.counted.has(step)) return;
    this.counted.add(step);
    this.toolCalls++;
  }

  /** The step changed at `atMs`: its remaining budget is counted from now. */
  private touch(draft: Draft, atMs: number): void {
    draft.atMs = atMs;
    draft.toolCalls = this.toolCalls;
    draft.tokens = this.tokens;
  }

  private draftFor(step: number, atMs: number): Draft {
    let draft = this.byStep.get(step);
    if (!draft) {
      draft = {
        event: { step, decision: 'no_decision', decisionSummary: 'no decision yet' },
        atMs,
        toolCalls: this.toolCalls,
        tokens: this.tokens,
        cost: {},
      };
      this.byStep.set(step, draft);
      this.drafts.push(draft);
    }
    return draft;
  }
}

/** A step's event, its keys in the contract's order whatever order the history filled them in. */
function stepEvent(draft: Draft, budget: Budget, startedAtMs: number | undefined): StepEvent {
  const e = draft.event;
  return {
    step: e.step,
    decision: e.decision,
    decisionSummary: e.decisionSummary,
    ...(e.tool !== undefined ? { tool: e.tool } : {}),
    ...(e.argumentDigest !== undefined ? { argumentDigest: e.argumentDigest } : {}),
    ...(e.policyDecision !== undefined ? { policyDecision: e.policyDecision } : {}),
    ...(e.approval !== undefined ? { approval: e.approval } : {}),
    ...(e.validator !== undefined ? { validator: e.validator } : {}),
    ...(e.unsupportedClaims !== undefined ? { unsupportedClaims: e.unsupportedClaims } : {}),
    ...(e.observation !== undefined ? { observation: e.observation } : {}),
    remainingBudget: {
      steps: Math.max(0, budget.max_steps - e.step),
      toolCalls: Math.max(0, budget.max_tool_calls - draft.toolCalls),
      wallTimeMs: Math.max(0, budget.max_seconds * 1000 - (draft.atMs - (startedAtMs ?? draft.atMs))),
      tokens: budget.max_tokens > 0 ? Math.max(0, budget.max_tokens - draft.tokens) : null,
    },
    ...(e.stopReason !== undefined ? { stopReason: e.stopReason } : {}),
  };
}

function observed(
  status: ObservationStatus,
  observation: Pick<Observation, 'source' | 'bytes' | 'truncated'> | undefined,
): StepEvent['observation'] {
  return { status, source: observation?.source, bytes: observation?.bytes, truncated: observation?.truncated };
}

function tokensOf(charged: AttemptCharge[]): number {
  return charged.reduce((sum, a) => sum + a.prompt_tokens + a.completion_tokens, 0);
}

function usdOf(charged: AttemptCharge[]): number {
  return roundUsd(charged.reduce((sum, a) => sum + a.cost_usd, 0));
}

/** A final answer the validator refused. */
function refusedFinal(draft: Draft, claims: ClaimText[]): void {
  draft.event.policyDecision = 'denied';
  draft.event.validator = 'unsupported';
  draft.event.unsupportedClaims = claims;
}

function claimsOf(data: unknown): ClaimText[] {
  const claims = (data as { unsupported_claims?: unknown } | undefined)?.unsupported_claims;
  return Array.isArray(claims) ? (claims as ClaimText[]) : [];
}

function describeDecision(draft: Draft, text: string): void {
  // The widest contract: a run from before decision_summary ended on it, which its result says.
  const validation = validateAction(text, { summary: true, message: true });
  if (!validation.ok) {
    draft.event.decision = 'invalid_action';
    draft.event.decisionSummary = `invalid action: ${validation.reason}`;
    return;
  }
  const action = validation.action;
  const own = action.decision_summary;
  if (action.kind === 'final') {
    draft.event.decision = 'final';
    draft.event.decisionSummary = own ?? `final answer (${action.answer.length} chars)`;
    return;
  }
  if (action.kind === 'escalate') {
    draft.event.decision = 'escalate';
    draft.event.decisionSummary = own ?? 'escalate to a person';
    draft.event.tool = 'escalate';
    draft.event.argumentDigest = digest({ reason: action.reason });
    return;
  }
  if (action.kind === 'message') {
    draft.event.decision = 'message';
    draft.event.decisionSummary = own ?? `message to the customer (${action.text.length} chars)`;
    draft.event.tool = 'message';
    return;
  }
  draft.event.decision = 'tool_call';
  // Argument names, never values: the summary is for reading, the digest is for matching.
  draft.event.decisionSummary = own ?? `call ${action.name}(${Object.keys(action.args).sort().join(', ')})`;
  draft.event.tool = action.name;
  draft.event.argumentDigest = digest(action.args);
}

/** sha256 of the key-order-free JSON of the arguments. */
export const digest = argumentDigest;

function firstLine(text: string): string {
  return text.split('\n')[0]!.slice(0, 200);
}
