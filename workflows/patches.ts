// The workflow's patched() guards: which behaviour a run has, decided from its own history so that
// every recorded run replays on the path it took. Each patch marker a run records is also an upsert
// of Temporal's TemporalChangeVersion search attribute, so a new run records one marker, the newest,
// which stands for all the older ones (a run that has it was started by code that had them all).
import { patched } from '@temporalio/workflow';
import { SEARCH_ATTRIBUTES_PATCH } from '../common/search-attributes';

/**
 * Runs started before effects, approvals and the principal gate existed (issue 3) keep their old
 * paths when replayed: an escalate action was bad_kind, issue_refund was tool_missing, and no
 * call was denied by principal policy. Runs between it and BATCHED_UPSERTS_PATCH recorded it the
 * first time it mattered.
 */
export const EFFECTS_PATCH = 'effects-approvals-principal-gate';

/**
 * Issue 9: the input is validated at entry; a cancel or a deadline decides the ending whatever the
 * in-flight activity reported; an effect cut off is reconciled by key and every result lists its
 * effects; facts age across an approval wait; loop detection folds free text; continue-as-new
 * carries a bounded state. Histories recorded before it replay on the old paths.
 */
export const FAULTS_PATCH = 'fault-guarantees-v1';

/**
 * Issue 10: the Agent* search attributes are upserted once per step at most, with only the values
 * that changed (the tool-call count goes with the next step's upsert or the end's). Also stands for
 * every patch above: a run that records it records no other marker.
 */
export const BATCHED_UPSERTS_PATCH = 'batched-upserts-v1';

/**
 * Issue 12: the final validator checks a final answer against the run's observations (bounced once,
 * then unsupported_answer, in enforce mode); the action contract accepts an optional
 * decision_summary; activity summaries carry the step event's fields. Stands for every patch above.
 */
export const FINAL_VALIDATOR_PATCH = 'final-validator-v1';

/**
 * Issue 13: every LLM attempt that reported usage is charged (cost and tokens), a dollar budget
 * reserves each decision's worst case, a run whose budget runs low winds down (asks for its final
 * answer), and an opt-in wait for a top-up (`agent extend`). Stands for every patch above.
 */
export const COST_PATCH = 'cost-budget-v1';

/**
 * Money and limits under retries, faults and bad input: each LLM attempt (retries included) is
 * reserved against what is left, charges of a decision cut off by a cancel or deadline are kept,
 * read-only tools heartbeat so a hung worker's attempt is noticed in seconds, and a top-up changes
 * only the budgets it names. Stands for every patch above.
 */
export const LIMITS_PATCH = 'money-limits-v1';

export interface RunPatches {
  /** LIMITS_PATCH (and so every older one). */
  readonly limits: boolean;
  /** COST_PATCH (and so every older one). */
  readonly cost: boolean;
  /** FINAL_VALIDATOR_PATCH (and so every older one). */
  readonly validator: boolean;
  /** BATCHED_UPSERTS_PATCH (and so every older one). */
  readonly batched: boolean;
  /** FAULTS_PATCH: false only when replaying a history recorded before it. */
  readonly faults: boolean;
}

/** Called once, first thing in the workflow: the newest patch first, the older ones only for older runs. */
export function runPatches(): RunPatches {
  const limits = patched(LIMITS_PATCH);
  const cost = limits || patched(COST_PATCH);
  const validator = cost || patched(FINAL_VALIDATOR_PATCH);
  const batched = validator || patched(BATCHED_UPSERTS_PATCH);
  return { limits, cost, validator, batched, faults: batched || patched(FAULTS_PATCH) };
}

/** Whether the run has effects, approvals and the principal gate: asked lazily, where a run first needs it. */
export function effectsPatched(patches: RunPatches): boolean {
  return patches.batched || patched(EFFECTS_PATCH);
}

/** Whether the run upserts its search attributes (the client found them registered: `flag`). */
export function searchAttributesPatched(patches: RunPatches, flag: boolean | undefined): boolean {
  return flag === true && (patches.batched || patched(SEARCH_ATTRIBUTES_PATCH));
}
