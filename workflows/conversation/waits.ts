// The run's waits for people: a person's answer to a tool call that needs approval or to an
// escalation (the `approval` Update), an operator's top-up (`agent extend`), and a customer's next
// message in a conversation (the `say` Update). The time a person
// takes is theirs, not the agent's: it is added up here and left out of max_seconds. The handlers
// in agent.ts call in here; the loop (run-loop.ts) waits through them.
import { ApplicationFailure, condition } from '@temporalio/workflow';
import { checkApprovalAnswer } from '../../common/conversation/approvals';
import type {
  AnsweredApproval,
  ApprovalAnswer,
  ApprovalReceipt,
  PendingApproval,
} from '../../common/conversation/approvals';
import type { BudgetExtension, ExtendRequest } from '../../common/cost/extend';
import { INVALID_APPROVAL } from '../../common/agent-messages';
import type { WaitKind } from '../../common/temporal/waiting';

/** A question to a person, before it is asked (the wait adds when it was asked and until when). */
export type PendingFields = Omit<PendingApproval, 'requested_at' | 'expires_at'>;

/**
 * How a wait that may sit long ended: what it waited for came, its timeout passed, or Temporal
 * suggested continuing as new (the history grew large, e.g. under a flood of Signals every one of
 * which enters it): the run hands the wait to the next run of its chain instead of growing until
 * Temporal ends it at its history limit.
 */
export type WaitEnd = 'done' | 'timeout' | 'continue_as_new';

export class Waits {
  /** Time spent waiting for people, finished waits only. */
  humanWaitMs: number;
  /** A top-up wait timed out: the run does not wait again. */
  topupDeclined: boolean;
  /** Set while the run waits for a person's answer. */
  awaiting: { pending: PendingApproval; sinceMs: number } | undefined;
  /** Set while the run waits for a top-up. */
  topup: { reason: string; sinceMs: number; expiresMs: number } | undefined;
  /** Set while the run waits for the customer's next message (`consent`: their yes to a write). */
  customer: { sinceMs: number; expiresMs: number; kind: 'customer' | 'consent' } | undefined;
  /** The deadline of a top-up wait handed on by continue-as-new: the next wait keeps it. */
  topupUntilMs: number | undefined;
  private reply: ApprovalAnswer | undefined;
  private readonly answered = new Map<string, AnsweredApproval>();
  /**
   * A wait handed on by continue-as-new, until this run takes it up again (or finds it needless):
   * the inbox keeps showing it across the hand-over instead of `none` for a moment.
   */
  private handedOn: WaitKind;

  constructor(
    private readonly approvalTimeoutMs: number,
    carried:
      | { human_wait_ms?: number; topup_declined?: boolean; topup_until_ms?: number; awaiting_reply?: unknown }
      | undefined,
    /** Whether Temporal suggests continuing as new now (workflowInfo, recorded in the history: replays the same). */
    private readonly moveOnSuggested: () => boolean,
    /** Told what the run waits for, each time that may have changed (AgentWaiting). */
    private readonly changed: (kind: WaitKind) => void = () => undefined,
  ) {
    this.humanWaitMs = carried?.human_wait_ms ?? 0;
    this.topupDeclined = carried?.topup_declined === true;
    this.topupUntilMs = carried?.topup_until_ms;
    this.handedOn = carried?.awaiting_reply ? 'customer' : carried?.topup_until_ms !== undefined ? 'topup' : 'none';
  }

  /** What the run waits for now: the kind of the wait going on, or of one handed on to it. */
  kind(): WaitKind {
    if (this.awaiting) return this.awaiting.pending.kind === 'escalation' ? 'escalation' : 'approval';
    if (this.topup) return 'topup';
    if (this.customer) return this.customer.kind;
    return this.handedOn;
  }

  /** The top-up handed on is not needed after all (a top-up came while the runs changed over). */
  topupNotNeeded(): void {
    this.topupUntilMs = undefined;
    if (this.handedOn === 'topup') this.handedOn = 'none';
    this.changed(this.kind());
  }

  /** A wait begins: it replaces any handed on. */
  private began(): void {
    this.handedOn = 'none';
    this.changed(this.kind());
  }

  /** A wait ended (`end` undefined: it threw, e.g. cancelled); one handed on to the next run stays shown. */
  private ended(end: WaitEnd | undefined, kind: WaitKind): void {
    if (end === 'continue_as_new') this.handedOn = kind;
    this.changed(this.kind());
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

  /**
   * Waits for the `approval` Update; undefined when nobody answered within the approval timeout (its timer named `timerSummary`).
   * This wait does not continue as new when Temporal suggests it: the question is asked mid-step
   * (the call admitted and counted, its owner checked, or the model's escalation taken), and a
   * person answers it by id against the answers this run keeps; handing all that to a next run
   * means resuming a step half-way. The approval timeout bounds it.
   */
  async person(pending: PendingApproval, timerSummary: string): Promise<ApprovalAnswer | undefined> {
    const sinceMs = Date.now();
    this.awaiting = { pending, sinceMs };
    this.reply = undefined;
    this.began();
    try {
      const answered = await condition(() => this.reply !== undefined, this.approvalTimeoutMs, {
        summary: timerSummary,
      });
      return answered ? this.reply : undefined;
    } finally {
      this.humanWaitMs += Date.now() - sinceMs;
      this.awaiting = undefined;
      this.reply = undefined;
      this.ended(undefined, 'none');
    }
  }

  /** The Update's validator: rejected answers change nothing and leave no trace in the history. */
  validateAnswer(answer: unknown): void {
    const check = checkApprovalAnswer(answer, this.awaiting?.pending, this.answered);
    if (!check.ok)
      throw ApplicationFailure.create({ type: INVALID_APPROVAL, message: check.error, nonRetryable: true });
  }

  /** The `approval` Update: the answer the waiting run resumes with (a duplicate changes nothing). */
  answer(answer: ApprovalAnswer): ApprovalReceipt {
    // Validators do not run on replay, so the handler checks again (same state, same outcome).
    const check = checkApprovalAnswer(answer, this.awaiting?.pending, this.answered);
    if (!check.ok)
      throw ApplicationFailure.create({ type: INVALID_APPROVAL, message: check.error, nonRetryable: true });
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
  async topUp(reason: string, seconds: number, granted: () => boolean): Promise<WaitEnd> {
    const sinceMs = Date.now();
    // A wait handed on by the previous run keeps its deadline.
    const expiresMs = this.topupUntilMs ?? sinceMs + seconds * 1000;
    this.topupUntilMs = undefined;
    this.topup = { reason, sinceMs, expiresMs };
    this.began();
    let end: WaitEnd | undefined;
    try {
      end = await this.until(granted, expiresMs - sinceMs, 'top-up wait (agent extend)');
    } finally {
      this.humanWaitMs += Date.now() - sinceMs;
      this.topup = undefined;
      this.ended(end, 'topup');
    }
    if (end === 'timeout') this.topupDeclined = true;
    if (end === 'continue_as_new') this.topupUntilMs = expiresMs;
    return end;
  }

  /**
   * Waits up to `timeoutMs` for the customer (`arrived` turns true): a durable timer and condition,
   * however long it takes; `awaited` says what and how to answer on the timer.
   */
  async customerTurn(
    expiresMs: number,
    arrived: () => boolean,
    awaited: string,
    handOn: boolean,
    kind: 'customer' | 'consent' = 'customer',
  ): Promise<WaitEnd> {
    const sinceMs = Date.now();
    this.customer = { sinceMs, expiresMs, kind };
    this.began();
    let end: WaitEnd | undefined;
    try {
      end = await this.until(arrived, expiresMs - sinceMs, `idle timeout · ${awaited}`, handOn);
      return end;
    } finally {
      this.humanWaitMs += Date.now() - sinceMs;
      this.customer = undefined;
      this.ended(end, kind);
    }
  }

  /** A durable wait for `done`, up to `timeoutMs`; `handOn`: it also ends when Temporal suggests continuing as new. */
  private async until(done: () => boolean, timeoutMs: number, summary: string, handOn = true): Promise<WaitEnd> {
    const moveOn = () => handOn && this.moveOnSuggested();
    // A deadline already passed (a wait handed on late) still checks `done` once.
    const ended = await condition(() => done() || moveOn(), Math.max(1, timeoutMs), { summary });
    if (!ended) return 'timeout';
    return done() ? 'done' : 'continue_as_new';
  }
}

/** A top-up as the run records it: what it adds, who gave it and why, at which step and when. */
export function grantOf(request: ExtendRequest, step: number, updateId?: string): BudgetExtension {
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
    ...(updateId !== undefined ? { update_id: updateId } : {}),
  };
}
