// One decide attempt's accounting: the decision's ledger of charged attempts and the requests it
// sent, both carried from attempt to attempt in the heartbeat details (see decide.ts), and the
// failures that end the decision with them.
import { ApplicationFailure } from '@temporalio/activity';
import type { Context } from '@temporalio/activity';
import type { AttemptCharge } from '../../common/cost/budget';
import { attemptCost, chargedTokens, ledgerOf } from '../../common/cost/cost';
import type { ModelPrice } from '../../common/cost/cost';
import { requestTurn, sentBefore } from '../../common/cost/llm-requests';
import { attemptChargedSignal, LLM_TIMEOUT } from '../../common/agent-messages';
import type { DecideInput, DecideLedger } from '../../common/types';

export class AttemptBook {
  readonly attempt: number;
  readonly step: number;
  readonly idempotencyKey: string;
  /** The attempts of the decision that reported usage: the earlier ones (their heartbeats, or their failure reports), then this one. */
  readonly ledger: AttemptCharge[];
  /** The attempts that sent their request, this one included once it sends. */
  readonly sent: number[];
  /** Whether this attempt may send (common/cost/llm-requests.ts). */
  readonly turn: 'send' | 'last' | 'spent';
  /** What an attempt that reports unusable counts is charged instead: its request's estimate. */
  readonly estimate = { prompt_tokens: 0, completion_tokens: 0 };

  constructor(
    private readonly ctx: Context,
    private readonly input: DecideInput,
    private readonly price: ModelPrice | undefined,
  ) {
    this.attempt = ctx.info.attempt;
    this.step = stepOfKey(input.idempotency_key);
    this.idempotencyKey = input.idempotency_key;
    this.ledger = ledgerOf(ctx.info.heartbeatDetails).filter((a) => a.attempt < this.attempt);
    this.sent = sentBefore(ctx.info.heartbeatDetails, this.attempt);
    this.turn = requestTurn(this.sent, input.max_requests);
  }

  details(): DecideLedger {
    return { attempts: this.ledger, sent: this.sent };
  }

  /** Charges this attempt for what it reported (nothing when it reported no tokens), told at once by heartbeat. */
  charge(usage: unknown, outcome: AttemptCharge['outcome']): AttemptCharge | undefined {
    const counts = chargedTokens(usage, this.estimate);
    if (counts.prompt_tokens + counts.completion_tokens === 0) return undefined;
    const { step, attempt } = this;
    const entry: AttemptCharge = this.price
      ? { step, attempt, outcome, ...counts, cost_usd: attemptCost(counts, this.price) }
      : { step, attempt, outcome, ...counts, cost_usd: 0, unpriced: true };
    this.ledger.push(entry);
    this.ctx.heartbeat(this.details());
    return entry;
  }

  /** A paid attempt that fails is told to the run before the failure is reported (common/cost/attempt-charged.ts). */
  async chargeFailed(usage: unknown): Promise<void> {
    const entry = this.charge(usage, 'failed');
    if (entry && this.input.report_charges) await reportCharge(this.ctx, entry);
  }

  /** Says, before sending, that this attempt is sending (a heartbeat that goes out at once when it is the first). */
  sending(): void {
    this.sent.push(this.attempt);
    this.ctx.heartbeat(this.details());
  }

  /**
   * Only an attempt that died after sending leaves the count spent (a failed last request is
   * final): its worker stopped or crashed, so the decision ends as that attempt's timeout would.
   */
  spent(): ApplicationFailure {
    return ApplicationFailure.create({
      message: `LLM not asked again: the decision's ${this.sent.length} requests are spent, the last one's attempt ended without an answer (its worker stopped)`,
      type: LLM_TIMEOUT,
      nonRetryable: true,
      details: [this.details()],
    });
  }

  /** The failure of the decision's last request is final, with the type its retries would have ended with. */
  final(failure: unknown): unknown {
    return this.turn === 'last' &&
      this.sent.includes(this.attempt) &&
      failure instanceof ApplicationFailure &&
      !failure.nonRetryable
      ? ApplicationFailure.create({
          message: failure.message,
          type: failure.type ?? undefined,
          nonRetryable: true,
          details: [this.details()],
        })
      : failure;
  }
}

/** How long a paid failed attempt waits for its Signal to be recorded before it fails anyway. */
const REPORT_TIMEOUT_MS = 5_000;

/**
 * Signals a paid failed attempt to the run. Best effort: if the Signal is not recorded in time the
 * attempt's ledger still reaches the run (its failure, the next attempt's heartbeats), except when a
 * cancel falls between two attempts; the worker logs the miss.
 */
async function reportCharge(ctx: Context, entry: AttemptCharge): Promise<void> {
  const run = ctx.info.workflowExecution;
  if (!run) return;
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const signalled = ctx.client.workflow.getHandle(run.workflowId, run.runId).signal(attemptChargedSignal, entry);
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`not recorded within ${REPORT_TIMEOUT_MS} ms`)), REPORT_TIMEOUT_MS);
    });
    await Promise.race([signalled, late]);
  } catch (err) {
    ctx.log.warn('decide: could not Signal a paid failed attempt to its run', {
      attempt: entry.attempt,
      error: err instanceof Error ? err.message.slice(0, 200) : String(err).slice(0, 200),
    });
  } finally {
    clearTimeout(timer);
  }
}

/** The decision's step from its idempotency key (`...:decide:<step>`). */
function stepOfKey(key: string): number {
  const match = /:decide:(\d+)$/.exec(key);
  return match ? Number(match[1]) : 0;
}
