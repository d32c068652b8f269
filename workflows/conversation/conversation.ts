// A conversation run's side of the workflow: the transcript, the `say` Update's validator and
// handler, and the loop's port for messages (the agent speaks, then waits durably for the
// customer). Semantics: docs/conversations.md. Deterministic code only.
import { ApplicationFailure, currentUpdateInfo, workflowInfo } from '@temporalio/workflow';
import {
  boundedMessage,
  checkSay,
  CONVERSATION_LIMITS,
  DEFAULT_IDLE_TIMEOUT_SECONDS,
  EMPTY_TRANSCRIPT,
  lastAgentMessage,
  rememberedAfter,
  unansweredOf,
  withTurn,
} from '../../common/conversation/conversation';
import type {
  AppliedSay,
  AwaitingReply,
  ConversationInput,
  SayReceipt,
  SayRequest,
  Transcript,
  Turn,
} from '../../common/conversation/conversation';
import { consentQuestion } from '../../common/conversation/consent';
import type { ConsentRequest } from '../../common/conversation/consent';
import type { CarriedState, ConversationState } from '../../common/types';
import type { ConsentReply, CustomerReply } from '../agent/step';
import type { WaitEnd, Waits } from './waits';
import { INVALID_MESSAGE } from '../../common/agent-messages';

/** What the loop asks of a conversation (absent in a run that is not one). */
export interface ConversationPort {
  transcript(): Transcript;
  /** Whether the customer has ended the conversation. */
  ended(): boolean;
  /** Whether the customer wrote turns the model has not read yet (and did not end the conversation). */
  unread(): boolean;
  /**
   * The agent's message joins the transcript; then the wait for the customer's answer, or
   * 'continue_as_new': Temporal suggested it meanwhile, and the next run waits on (`awaitingReply`).
   */
  message(step: number, text: string): Promise<CustomerReply | 'continue_as_new'>;
  /** The message a run handed on while its customer had not answered: this run waits for the answer first. */
  awaitingReply(): { step: number; text: string } | undefined;
  /** The workflow asks the customer to confirm a write; their next message is the answer. */
  consent(step: number, request: ConsentRequest): Promise<ConsentReply>;
}

export class Conversation {
  transcript: Transcript;
  private readonly idleMs: number;
  /** The turns the model had been shown when it last decided: later customer turns are news to it. */
  private shown = 0;
  /** The `say` Updates applied in this chain, the last ones (Temporal dedupes an Update id per run only). */
  private applied: AppliedSay[];
  /** Set while the agent's message waits for the customer's answer (carried if the run continues as new). */
  private replyWait: AwaitingReply | undefined;
  /** The consent question waiting for its answer (its turn number): a `say` written before it is refused. */
  private question: number | undefined;
  /**
   * The last turns the kept bound dropped. Customer messages that arrive while a decision is in
   * flight (at most `unanswered`) can push out turns its view showed: its retry, reading the view by
   * the Query, gets them back from here (asOf), and sees what its first attempt saw.
   */
  private dropped: Turn[] = [];

  constructor(
    readonly input: ConversationInput | undefined,
    carried: Pick<CarriedState, 'conversation' | 'say_updates' | 'awaiting_reply'> | undefined,
    private readonly waits: Waits,
    /** Whether the run goes on, and the step it is at. */
    private readonly run: () => { running: boolean; step: number },
  ) {
    this.transcript = carried?.conversation ?? EMPTY_TRANSCRIPT;
    this.applied = [...(carried?.say_updates ?? [])];
    this.replyWait = carried?.awaiting_reply;
    this.idleMs = (input?.idle_timeout_seconds ?? DEFAULT_IDLE_TIMEOUT_SECONDS) * 1000;
  }

  /** The `say` Update's validator: a refused message changes nothing and leaves no trace in the history. */
  validate(raw: unknown): SayRequest {
    // A repeat of an Update an earlier run applied is answered (by the handler), not checked again.
    if (this.repeat() !== undefined) return {};
    const check = checkSay(raw, {
      conversation: this.input !== undefined,
      running: this.run().running,
      ended: this.transcript.ended === true,
      unanswered: unansweredOf(this.transcript),
      ...(this.question !== undefined ? { question: this.question } : {}),
    });
    if (!check.ok) throw ApplicationFailure.create({ type: INVALID_MESSAGE, message: check.error, nonRetryable: true });
    return check.say;
  }

  /** The `say` Update: the customer's turn joins the transcript at once (a waiting run resumes). */
  say(raw: SayRequest): SayReceipt {
    const ended = () => this.transcript.ended === true;
    const repeat = this.repeat();
    if (repeat) return { n: repeat.n, awaited: false, ended: ended(), duplicate: true };
    // Validators do not run on replay: the handler checks again (same state, same outcome).
    const say = this.validate(raw);
    const awaited = this.waits.customer !== undefined;
    this.append({
      from: 'customer',
      text: say.text ?? '',
      step: this.run().step,
      ...(say.end ? { end: true as const } : {}),
    });
    const id = currentUpdateInfo()?.id;
    if (id !== undefined)
      this.applied = rememberedAfter(this.applied, { id, n: this.transcript.total }, workflowInfo().workflowId);
    return { n: this.transcript.total, awaited, ended: ended() };
  }

  /** The `say` Update being handled, if an earlier run of the chain applied one with its id. */
  private repeat(): AppliedSay | undefined {
    const id = currentUpdateInfo()?.id;
    return id === undefined ? undefined : this.applied.find((applied) => applied.id === id);
  }

  /** One more turn; the turns the kept bound drops are remembered for a while (`dropped`). */
  private append(turn: Omit<Turn, 'n'>): void {
    const before = this.transcript.turns;
    this.transcript = withTurn(this.transcript, turn);
    const first = this.transcript.turns[0]?.n ?? Infinity;
    const gone = before.filter((t) => t.n < first);
    if (gone.length > 0) this.dropped = [...this.dropped, ...gone].slice(-2 * CONVERSATION_LIMITS.unanswered);
  }

  /**
   * The transcript as it was when its last turn was `lastTurn` (a planned view's `turns`): what the
   * model_view Query answers from, so that a decision reads the same view whenever it asks.
   */
  asOf(lastTurn: number): Transcript | undefined {
    const t = this.carried();
    if (t === undefined || lastTurn >= t.total) return t;
    const turns = [...this.dropped, ...t.turns]
      .filter((turn) => turn.n <= lastTurn)
      .slice(-CONVERSATION_LIMITS.kept_turns);
    return { ...t, turns, total: lastTurn };
  }

  /** The transcript a conversation carries into its next run and its result; undefined: not a conversation. */
  carried(): Transcript | undefined {
    return this.input === undefined ? undefined : this.transcript;
  }

  /** What else a conversation hands to its next run: the Updates it applied, the reply it waits for. */
  carriedWaits(): Pick<CarriedState, 'say_updates' | 'awaiting_reply'> {
    if (this.input === undefined) return {};
    return {
      ...(this.applied.length > 0 ? { say_updates: this.applied } : {}),
      ...(this.replyWait ? { awaiting_reply: this.replyWait } : {}),
    };
  }

  /** The loop's port, or undefined when the run is not a conversation. */
  port(awaiting: () => void): ConversationPort | undefined {
    if (this.input === undefined) return undefined;
    return {
      transcript: () => {
        this.shown = this.transcript.total;
        return this.transcript;
      },
      ended: () => this.transcript.ended === true,
      unread: () => this.transcript.ended !== true && newsSince(this.transcript, this.shown),
      message: async (step, text) => {
        // A wait handed on by the previous run (or resumed in place) has its message sent already.
        if (this.replyWait === undefined) {
          this.append({ from: 'agent', text: boundedMessage(text), step });
          this.replyWait = { step, text, shown: this.shown, expires_ms: Date.now() + this.idleMs };
        }
        awaiting();
        const { shown, expires_ms } = this.replyWait;
        const arrived = () => this.transcript.ended === true || newsSince(this.transcript, shown);
        // A message sent while the model decided is already there: no wait at all.
        const end: WaitEnd = arrived()
          ? 'done'
          : await this.customerTurn(arrived, awaiting, "the customer's reply", 'TEXT', expires_ms);
        if (end === 'continue_as_new') return end;
        this.replyWait = undefined;
        if (end === 'timeout') return 'idle';
        return this.transcript.ended ? 'ended' : 'answered';
      },
      awaitingReply: () => this.replyWait && { step: this.replyWait.step, text: this.replyWait.text },
      consent: async (step, request) => {
        const text = consentQuestion(request);
        this.append({ from: 'agent', text, step, consent: request });
        awaiting();
        // Only a message written after the question answers it (one sent earlier did not see it).
        const asked = this.transcript.total;
        const reply = () => this.transcript.turns.find((turn) => turn.from === 'customer' && turn.n > asked);
        const arrived = () => this.transcript.ended === true || reply() !== undefined;
        const about = `the customer's consent to ${request.tool}`;
        // This wait does not continue as new: the customer's answer decides a call admitted mid-step
        // (see Waits.person); the idle timeout bounds it.
        const expires = Date.now() + this.idleMs;
        this.question = asked;
        try {
          if (
            !arrived() &&
            (await this.customerTurn(arrived, awaiting, about, 'yes', expires, false, 'consent')) === 'timeout'
          )
            return { reply: 'idle' };
        } finally {
          this.question = undefined;
        }
        const answer = reply();
        // The customer's last word ends the conversation, whatever it says.
        if (this.transcript.ended || !answer) return { reply: 'ended' };
        return { reply: 'answered', text: answer.text };
      },
    };
  }

  /**
   * The durable wait for the customer, until `expiresMs`; `waiting` runs once its deadline is set (the
   * details show it). `handOn`: the wait ends 'continue_as_new' when Temporal suggests it; `kind`:
   * what the inbox shows (the customer's next message, or their yes to a write).
   */
  private customerTurn(
    arrived: () => boolean,
    waiting: () => void,
    awaited: string,
    reply: string,
    expiresMs: number,
    handOn = true,
    kind: 'customer' | 'consent' = 'customer',
  ): Promise<WaitEnd> {
    const command = `agent say ${workflowInfo().workflowId} ${reply}`;
    const turn = this.waits.customerTurn(expiresMs, arrived, `${awaited} awaited — ${command}`, handOn, kind);
    waiting();
    return turn;
  }

  /** What the state query shows of the conversation. */
  state(): ConversationState | undefined {
    if (this.input === undefined) return undefined;
    const last = lastAgentMessage(this.transcript);
    const expires = this.waits.customer?.expiresMs;
    return {
      ...this.transcript,
      unanswered: unansweredOf(this.transcript),
      ...(last ? { last_message: last } : {}),
      ...(expires !== undefined ? { idle_expires_at: new Date(expires).toISOString() } : {}),
    };
  }
}

/** Whether the customer wrote after turn `shown` (what the model has not read yet). */
function newsSince(t: Transcript, shown: number): boolean {
  return t.turns.some((turn) => turn.from === 'customer' && turn.n > shown);
}
