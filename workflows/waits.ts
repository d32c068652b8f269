// The run's waits for people: a person's answer to a tool call that needs approval or to an
// escalation (the `approval` Update), an operator's top-up (`agent extend`), and a customer's next
// message in a conversation (the `say` Update). The time a person
// takes is theirs, not the agent's: it is added up here and left out of max_seconds. The handlers
// in agent.ts call in here; the loop (run-loop.ts) waits through them.
import { ApplicationFailure, condition } from '@temporalio/workflow';
import { checkApprovalAnswer } from '../common/approvals';
import type { AnsweredApproval, ApprovalAnswer, ApprovalReceipt, PendingApproval } from '../common/approvals';
import type { BudgetExtension, ExtendRequest } from '../common/extend';

/** A question to a person, before it is asked (the wait adds when it was asked and until when). */
export type PendingFields = Omit<PendingApproval, 'requested_at' | 'expires_at'>;

export class Waits {
  /** Time spent waiting for people, finished waits only. */
  humanWaitMs: number;
  /** A top-up wait timed out: the run does not wait again. */
  topupDeclined: boolean;
  /** Set while the run waits for a person's answer. */
  awaiting: { pending: PendingApproval; sinceMs: number } | undefined;
  /** Set while the run waits for a top-up. */
  topup: { reason: string; sinceMs: number; expiresMs: number } | undefined;
  /** Set while the run waits for the customer's next message. */
  customer: { sinceMs: number; expiresMs: number } | undefined;
  private reply: ApprovalAnswer | undefined;
  private readonly answered = new Map<string, AnsweredApproval>();

  constructor(
    private readonly approvalTimeoutMs: number,
    carried: { human_wait_ms?: number; topup_declined?: boolean } | undefined,
  ) {
    this.humanWaitMs = carried?.human_wait_ms ?? 0;
    this.topupDeclined = carried?.topup_declined === true;
  }

  /** Time in the wait going on now, if any (not yet in humanWaitMs). */
  waitingNowMs(now: number): number {
    const since = this.awaiting?.sinceMs ?? this.topup?.sinceMs ?? this.customer?.sinceMs;
    return since === undefined ? 0 : now - since;
  }

  /** Whether a person, an operator or the customer is being waited for right now. */
  waiting(): boolean {
    return this.awaiting !== undefined || this.topup !== undefined || this.customer !== undefined;
  }

  /** The question as the person sees it: asked now, answered within the approval timeout. */
  pending(fields: PendingFields): PendingApproval {
    const now = Date.now();
    return {
      ...fields,
      requested_at: new Date(now).toISOString(),
      expires_at: new Date(now + this.approvalTimeoutMs).toISOString(),
    };
  }

  /** Waits for the `approval` Update; undefined when nobody answered within the approval timeout (its timer named `timerSummary`). */
  async person(pending: PendingApproval, timerSummary: string): Promise<ApprovalAnswer | undefined> {
    const sinceMs = Date.now();
    this.awaiting = { pending, sinceMs };
    this.reply = undefined;
    try {
      const answered = await condition(() => this.reply !== undefined, this.approvalTimeoutMs, {
        summary: timerSummary,
      });
      return answered ? this.reply : undefined;
    } finally {
      this.humanWaitMs += Date.now() - sinceMs;
      this.awaiting = undefined;
      this.reply = undefined;
    }
  }

  /** The Update's validator: rejected answers change nothing and leave no trace in the history. */
  validateAnswer(answer: unknown): void {
    const check = checkApprovalAnswer(answer, this.awaiting?.pending, this.answered);
    if (!check.ok)
      throw ApplicationFailure.create({ type: 'InvalidApproval', message: check.error, nonRetryable: true });
  }

  /** The `approval` Update: the answer the waiting run resumes with (a duplicate changes nothing). */
  answer(answer: ApprovalAnswer): ApprovalReceipt {
    // Validators do not run on replay, so the handler checks again (same state, same outcome).
    const check = checkApprovalAnswer(answer, this.awaiting?.pending, this.answered);
    if (!check.ok)
      throw ApplicationFailure.create({ type: 'InvalidApproval', message: check.error, nonRetryable: true });
    if (check.duplicate)
      return { id: answer.id, decision: answer.decision, duplicate: true, pending: check.prior.pending };
    const accepted: ApprovalAnswer = {
      id: answer.id,
      decision: answer.decision,
      ...(answer.reason !== undefined ? { reason: answer.reason } : {}),
      ...(answer.text !== undefined ? { text: answer.text } : {}),
      ...(answer.operator !== undefined ? { operator: answer.operator } : {}),
    };
    this.answered.set(answer.id, { pending: check.pending, answer: accepted });
    this.reply = accepted;
    return { id: answer.id, decision: answer.decision, duplicate: false, pending: check.pending };
  }

  /**
   * Waits up to `seconds` for a top-up (`granted` turns true). A wait that times out is not
   * repeated: the run winds down or stops as it would have.
   */
  async topUp(reason: string, seconds: number, granted: () => boolean): Promise<void> {
    const sinceMs = Date.now();
    this.topup = { reason, sinceMs, expiresMs: sinceMs + seconds * 1000 };
    let extended: boolean;
    try {
      extended = await condition(granted, seconds * 1000, { summary: 'top-up wait (agent extend)' });
    } finally {
      this.humanWaitMs += Date.now() - sinceMs;
      this.topup = undefined;
    }
    if (!extended) this.topupDeclined = true;
  }

  /**
   * Waits up to `timeoutMs` for the customer (`arrived` turns true): a durable timer and condition,
   * however long it takes; `awaited` says what and how to answer on the timer. False: the idle timeout passed.
   */
  async customerTurn(timeoutMs: number, arrived: () => boolean, awaited: string): Promise<boolean> {
    const sinceMs = Date.now();
    this.customer = { sinceMs, expiresMs: sinceMs + timeoutMs };
    try {
      return await condition(arrived, timeoutMs, { summary: `idle timeout · ${awaited}` });
    } finally {
      this.humanWaitMs += Date.now() - sinceMs;
      this.customer = undefined;
    }
  }
}

/** A top-up as the run records it: what it adds, who gave it and why, at which step and when. */
export function grantOf(request: ExtendRequest, step: number): BudgetExtension {
  return {
    ...(request.usd ? { usd: request.usd } : {}),
    ...(request.steps ? { steps: request.steps } : {}),
    ...(request.tool_calls ? { tool_calls: request.tool_calls } : {}),
    ...(request.seconds ? { seconds: request.seconds } : {}),
    ...(request.tokens ? { tokens: request.tokens } : {}),
    reason: request.reason,
    ...(request.operator !== undefined ? { operator: request.operator } : {}),
    step,
    at: new Date(Date.now()).toISOString(),
  };
}
