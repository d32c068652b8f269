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
//  - argumentDigest: sha256 of the key-order-free JSON (workflows/hash.ts stableJson) of the
//    arguments the tool ran with (the gateway's normalised arguments), or, for a call the gateway
//    denied, of the arguments the model asked for. Its first 12 hex digits are the trace's args_hash.
//  - remainingBudget: what was left when the step ended (event time for the time budget).
//  - stopReason: on the last step of a run that has ended.
import { resolveBudget, roundUsd } from '../../common/cost/budget';
import { ledgerOf } from '../../common/cost/cost';
import type { Budget } from '../../common/cost/budget';
import { validateAction } from '../../common/contract';
import { argumentDigest } from '../../common/tools/hash';
import type { DecideInput, DecideOutput, FinalValidation, Observation, ToolInput } from '../../common/types';
import { VALIDATOR_SOURCE } from '../../common/validator/final-validator';
import type { ClaimText } from '../../common/validator/final-validator';
import { personObservation } from '../../common/conversation/approvals';
import { readRunHistory } from './read-history';
import type { DecodePayloads, HistoryEvent, RunHistory } from './read-history';

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
  const drafts: Draft[] = [];
  const byStep = new Map<number, Draft>();
  const budget: Budget | undefined = history.input ? resolveBudget(history.input.budget) : undefined;
  const startedAtMs = history.input?.carried?.started_at_ms ?? history.startedAtMs;
  let toolCalls = 0;
  /** Steps whose tool call passed the gateway (counted once, whether it then ran or not). */
  const counted = new Set<number>();
  const countCall = (step: number) => {
    if (!counted.has(step)) {
      counted.add(step);
      toolCalls++;
    }
  };
  let tokens = 0;
  const temporalStatus = history.temporalStatus;
  const result = history.result;

  const touch = (draft: Draft, atMs: number) => {
    draft.atMs = atMs;
    draft.toolCalls = toolCalls;
    draft.tokens = tokens;
  };
  const draftFor = (step: number, atMs: number): Draft => {
    let draft = byStep.get(step);
    if (!draft) {
      draft = {
        event: { step, decision: 'no_decision', decisionSummary: 'no decision yet' },
        atMs,
        toolCalls,
        tokens,
        cost: {},
      };
      byStep.set(step, draft);
      drafts.push(draft);
    }
    return draft;
  };

  for (const entry of history.entries) {
    const { atMs } = entry;
    if (entry.kind === 'approval') {
      const { receipt, answer } = entry;
      const draft = draftFor(receipt.pending.step, atMs);
      draft.event.approval = receipt.decision;
      if (receipt.pending.kind === 'tool_call') {
        draft.event.policyDecision = 'allowed';
        countCall(receipt.pending.step);
      }
      if (receipt.decision !== 'approve' && answer) {
        const observation = personObservation(receipt.pending, { ...answer, decision: receipt.decision });
        draft.event.observation = {
          status: observation.ok ? 'ok' : 'error',
          source: observation.source,
          bytes: observation.bytes,
          truncated: observation.truncated,
        };
      } else if (receipt.pending.kind === 'tool_call') {
        draft.event.observation = { status: 'not_run' };
      }
      touch(draft, atMs);
      continue;
    }

    const { step, role, name, input } = entry.activity;
    // A reconcile lookup does not change the step's event.
    if (role === 'reconcile') continue;

    if (entry.kind === 'scheduled') {
      if (role === 'decide') {
        const draft = draftFor(step, atMs);
        const windDown = (input as DecideInput | undefined)?.payload?.wind_down?.reason;
        if (typeof windDown === 'string') draft.cost.windDown = windDown;
        const view = (input as DecideInput | undefined)?.view;
        if (view && typeof view.compacted === 'number' && view.compacted > 0)
          draft.cost.compacted = { results: view.compacted, beforeStep: view.compact_before };
        // A final answer the validator refused: its observation is in this decide's input.
        for (const seen of (input as DecideInput | undefined)?.payload?.untrusted_observations?.steps ?? []) {
          const refused = byStep.get(seen.step);
          if (seen.observation?.source !== VALIDATOR_SOURCE || !refused) continue;
          refusedFinal(refused, claimsOf(seen.observation.data));
          refused.event.observation = {
            status: 'error',
            source: seen.observation.source,
            bytes: seen.observation.bytes,
            truncated: seen.observation.truncated,
          };
        }
        continue;
      }
      countCall(step);
      const draft = draftFor(step, atMs);
      draft.event.tool = name;
      draft.event.argumentDigest = digest((input as ToolInput | undefined)?.args ?? {});
      draft.event.policyDecision = 'allowed';
      draft.event.observation = { status: 'not_run' };
      touch(draft, atMs);
      continue;
    }

    const draft = draftFor(step, atMs);
    if (entry.kind === 'completed') {
      if (role === 'decide') {
        const output = entry.result as DecideOutput;
        const charged = ledgerOf(output);
        tokens += output?.attempts
          ? charged.reduce((sum, a) => sum + a.prompt_tokens + a.completion_tokens, 0)
          : (output?.usage?.total_tokens ?? 0);
        if (output?.attempts) draft.cost.costUsd = roundUsd(charged.reduce((sum, a) => sum + a.cost_usd, 0));
        describeDecision(draft, output?.text ?? '');
      } else {
        const observation = entry.result as Observation;
        draft.event.observation = {
          status: observation?.ok ? 'ok' : 'error',
          source: observation?.source,
          bytes: observation?.bytes,
          truncated: observation?.truncated,
        };
      }
      touch(draft, atMs);
      continue;
    }

    const how: ObservationStatus = entry.how;
    if (role === 'decide') {
      // The attempts the failed decision was charged for travel in its failure's details.
      const charged = entry.details !== undefined ? ledgerOf(entry.details) : [];
      if (charged.length > 0) {
        tokens += charged.reduce((sum, a) => sum + a.prompt_tokens + a.completion_tokens, 0);
        draft.cost.costUsd = roundUsd(charged.reduce((sum, a) => sum + a.cost_usd, 0));
      }
      draft.event.decision = 'no_decision';
      draft.event.decisionSummary =
        how === 'failed'
          ? `LLM call failed: ${firstLine(entry.message ?? 'unknown error')}`
          : how === 'timed_out'
            ? 'LLM call timed out'
            : 'LLM call cancelled';
    } else {
      draft.event.observation = { status: how };
    }
    touch(draft, atMs);
  }

  const resolvedBudget = budget ?? resolveBudget(undefined);
  const ended = temporalStatus !== 'RUNNING' && temporalStatus !== 'CONTINUED_AS_NEW';
  const last = drafts[drafts.length - 1];
  if (ended && result && last) {
    last.event.stopReason = result.stop_reason;
    // Nobody answered in time: the call had passed the gateway and counts as a tool call.
    if (result.stop_reason === 'approval_timeout') {
      last.event.approval = 'timeout';
      if (last.event.decision === 'tool_call') {
        last.event.policyDecision = 'allowed';
        countCall(last.event.step);
        last.toolCalls = toolCalls;
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

  // Keys in the contract's order, whatever order the history filled them in.
  const events: StepEvent[] = drafts.map((d) => {
    const e = d.event;
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
        steps: Math.max(0, resolvedBudget.max_steps - e.step),
        toolCalls: Math.max(0, resolvedBudget.max_tool_calls - d.toolCalls),
        wallTimeMs: Math.max(0, resolvedBudget.max_seconds * 1000 - (d.atMs - (startedAtMs ?? d.atMs))),
        tokens: resolvedBudget.max_tokens > 0 ? Math.max(0, resolvedBudget.max_tokens - d.tokens) : null,
      },
      ...(e.stopReason !== undefined ? { stopReason: e.stopReason } : {}),
    };
  });
  const costs = drafts
    .filter((d) => d.cost.costUsd !== undefined || d.cost.windDown !== undefined || d.cost.compacted !== undefined)
    .map((d) => ({ step: d.event.step, ...d.cost }));

  return {
    events,
    costs,
    outcome: {
      workflowId: history.workflowId,
      runIds: history.runIds,
      temporalStatus: temporalStatus === 'CONTINUED_AS_NEW' ? 'RUNNING' : temporalStatus,
      status: ended ? result?.status : undefined,
      stopReason: ended
        ? (result?.stop_reason ?? (temporalStatus === 'CANCELLED' ? 'cancelled' : undefined))
        : undefined,
      answer: ended ? result?.answer : undefined,
      budget: resolvedBudget,
      steps: drafts.length > 0 ? drafts[drafts.length - 1]!.event.step : 0,
      toolCalls,
      totalTokens: tokens,
    },
  };
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
