// A decision as an activity: the `decide` call, the attempts it was charged for (its ledger, plus
// the failed attempts it Signalled while it ran), and why it failed when it failed for good.
import {
  ActivityFailure,
  ApplicationFailure,
  CancelledFailure,
  isCancellation,
  proxyActivities,
  proxyLocalActivities,
  TimeoutFailure,
  workflowInfo,
} from '@temporalio/workflow';
import type { AttemptCharge, Remaining } from '../../common/cost/budget';
import { ledgerOf } from '../../common/cost/cost';
import type { LlmPricing } from '../../common/cost/cost';
import { checkAttemptCharged, withSignalled } from '../../common/cost/attempt-charged';
import { llmFailureStop } from '../../common/temporal/llm-failure-stop';
import type { Tagged } from '../../common/temporal/step-tag';
import type { ViewRef, ViewSource } from '../../common/model-view/model-view';
import { offerView } from '../../common/model-view/view-handoff';
import type { DecideInput, DecideOutput, DecisionPayload } from '../../common/types';
import { decideSummary } from '../reporting/activity-summary';
import { decideActivityOptions, decideMaxAttempts } from './decide-options';
import { decideKey } from '../agent/idempotency';
import type { DecideStop } from '../agent/run-loop';

type DecideFn = (input: Tagged<DecideInput>) => Promise<DecideOutput>;

export interface DecisionHooks {
  /** What is left of the budget (the activity summary shows it). */
  left(): Remaining;
  /** Whether a cancel or a deadline has cut the run off, and the throw that ends it then. */
  cutOff(): boolean;
  throwIfCutOff(): void;
  charge(attempts: readonly AttemptCharge[]): void;
  /** The model_view Query's answer for a planned view: handed to the decide activity with it. */
  view(ref: ViewRef): ViewSource;
}

export class Decisions {
  /** The decision running now, and the failed attempts its activity Signalled (by attempt). */
  private deciding: { step: number; signalled: Map<number, AttemptCharge> } | undefined;

  constructor(
    /** The model requests one decision may make (llm_max_attempts). */
    private readonly maxRequests: number,
    private readonly hooks: DecisionHooks,
  ) {}

  /** The attempt_charged Signal: a failed attempt of the decision running now; anything else is dropped. */
  attemptCharged(value: unknown): void {
    const deciding = this.deciding;
    const checked = checkAttemptCharged(
      value,
      deciding && { step: deciding.step, maxAttempts: decideMaxAttempts(this.maxRequests) },
    );
    if (typeof checked === 'string' || !deciding) return;
    if (!deciding.signalled.has(checked.attempt)) deciding.signalled.set(checked.attempt, checked);
  }

  async decide(
    step: number,
    payload: DecisionPayload,
    maxCompletionTokens?: number,
    leftUsd?: number,
    view?: ViewRef,
  ): Promise<DecideOutput | DecideStop> {
    const activityId = `${step}-decide`;
    const { decide } = proxyActivities<{ decide: DecideFn }>({
      activityId,
      summary: decideSummary(step, this.hooks.left(), view),
      ...decideActivityOptions(this.maxRequests),
    });
    const info = workflowInfo();
    const signalled = new Map<number, AttemptCharge>();
    // The ledger the activity reported, plus the paid attempts it Signalled and the ledger lacks.
    const ledger = (attempts: readonly AttemptCharge[]): AttemptCharge[] => withSignalled(attempts, signalled);
    this.deciding = { step, signalled };
    // The activity reads this view from memory when it runs on this worker, else by the Query.
    if (view) offerView(activityId, view, () => this.hooks.view(view));
    let decision: DecideOutput;
    try {
      decision = await decide({
        payload,
        idempotency_key: decideKey(info.workflowId, info.firstExecutionRunId, step),
        ...(maxCompletionTokens !== undefined ? { max_completion_tokens: maxCompletionTokens } : {}),
        ...(leftUsd !== undefined ? { left_usd: leftUsd } : {}),
        report_charges: true,
        max_requests: this.maxRequests,
        ...(view ? { view } : {}),
        trace: { step, role: 'decide' },
      });
    } catch (err) {
      this.deciding = undefined;
      // The attempts that reported usage before the decision failed for good are charged too.
      const attempts = ledger(failureLedger(err));
      // So are those of a decision a cancel or a deadline cut off (its cancellation or its last
      // heartbeat carries them), before the run ends for that reason.
      if (isCancellation(err) || this.hooks.cutOff()) this.hooks.charge(attempts);
      if (isCancellation(err)) throw err;
      // A hung or dead worker's attempt times out after the cancel or the deadline: that is
      // still the cancel or the deadline, not an LLM timeout.
      this.hooks.throwIfCutOff();
      return { stop: llmFailureStop(err), attempts };
    }
    this.deciding = undefined;
    decision = { ...decision, attempts: ledger(decision.attempts ?? []) };
    if (this.hooks.cutOff()) this.hooks.charge(decision.attempts ?? []);
    this.hooks.throwIfCutOff();
    return decision;
  }
}

/** The worker's model and price, asked once (a local activity, recorded) when the run first needs it. */
export function workerPricing(): () => Promise<LlmPricing> {
  let pricing: LlmPricing | undefined;
  return async () => {
    if (!pricing) {
      const { llm_pricing } = proxyLocalActivities<{ llm_pricing: () => Promise<LlmPricing> }>({
        startToCloseTimeout: '10 seconds',
      });
      pricing = await llm_pricing();
    }
    return pricing;
  };
}

/**
 * The attempts a failed or cancelled decide activity reported: in its failure's or cancellation's
 * details, or its last heartbeat's (a timeout).
 */
function failureLedger(err: unknown): AttemptCharge[] {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure || cause instanceof CancelledFailure) return ledgerOf(cause.details?.[0]);
  if (cause instanceof TimeoutFailure) return ledgerOf(cause.lastHeartbeatDetails);
  return [];
}
