// A run's budget: the operator's, fixed at the start, plus the top-ups granted by the `extend`
// Update (`agent extend`), in order, carried across continue-as-new.
import { ApplicationFailure, currentUpdateInfo } from '@temporalio/workflow';
import { INVALID_TOP_UP } from '../../common/agent-messages';
import { resolveBudget } from '../../common/cost/budget';
import type { Budget } from '../../common/cost/budget';
import { checkExtend, extendedBudget } from '../../common/cost/extend';
import type { BudgetExtension, ExtendReceipt, ExtendRequest } from '../../common/cost/extend';
import type { AgentInput } from '../../common/types';
import { grantOf } from '../conversation/waits';

export class TopUps {
  /** The operator's budget at the start; top-ups (`extensions`) add to it. */
  private readonly base: Budget;
  private granted: BudgetExtension[];

  constructor(
    input: AgentInput,
    /** The run now: whether it still runs (an ended run takes no top-up), the step it reached. */
    private readonly now: () => { running: boolean; step: number },
  ) {
    // Fixed for the whole run from the operator's input: nothing a model answer or a tool result
    // says can reach it (there is no code path from an observation to it).
    this.base = Object.freeze(resolveBudget(input.budget));
    this.granted = input.carried?.extensions ? [...input.carried.extensions] : [];
  }

  /** The budget now: the operator's, plus every top-up. */
  get budget(): Budget {
    return this.granted.length === 0 ? this.base : extendedBudget(this.base, this.granted);
  }

  /** Top-ups granted by `agent extend`, in order. */
  get extensions(): BudgetExtension[] {
    return this.granted;
  }

  /** The `extend` Update's validator: a refusal is not in the history. */
  validate(request: unknown): void {
    // A repeat of an Update a run of this chain granted is answered (by the handler), not checked again.
    if (this.repeat() >= 0) return;
    const { running } = this.now();
    const error = checkExtend(request, { granted: this.granted.length, running, budget: this.budget });
    if (error) throw ApplicationFailure.create({ type: INVALID_TOP_UP, message: error, nonRetryable: true });
  }

  /** The `extend` Update: the top-up is recorded with who and why, and a waiting run resumes. */
  grant(request: ExtendRequest): ExtendReceipt {
    const repeat = this.repeat();
    if (repeat >= 0) return { budget: this.budget, extensions: repeat + 1, duplicate: true };
    // Validators do not run on replay: the handler checks again (same state, same outcome).
    this.validate(request);
    this.granted = [...this.granted, grantOf(request, this.now().step, currentUpdateInfo()?.id)];
    return { budget: this.budget, extensions: this.granted.length };
  }

  /** Which top-up the `extend` Update being handled granted on this chain, else -1. */
  private repeat(): number {
    const id = currentUpdateInfo()?.id;
    return id === undefined ? -1 : this.granted.findIndex((e) => e.update_id === id);
  }
}
