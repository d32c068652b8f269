// A conversation run's side of the workflow: the transcript, the `say` Update's validator and
// handler, and the loop's port for messages (the agent speaks, then waits durably for the
// customer). Semantics: docs/conversations.md. Deterministic code only.
import { ApplicationFailure, workflowInfo } from '@temporalio/workflow';
import {
  boundedMessage,
  checkSay,
  DEFAULT_IDLE_TIMEOUT_SECONDS,
  EMPTY_TRANSCRIPT,
  lastAgentMessage,
  unansweredOf,
  withTurn,
} from '../common/conversation';
import type { ConversationInput, SayReceipt, SayRequest, Transcript } from '../common/conversation';
import { consentQuestion } from '../common/consent';
import type { ConsentRequest } from '../common/consent';
import type { ConversationState } from '../common/types';
import type { ConsentReply, CustomerReply } from './step';
import type { Waits } from './waits';

/** What the loop asks of a conversation (absent in a run that is not one). */
export interface ConversationPort {
  transcript(): Transcript;
  /** Whether the customer has ended the conversation. */
  ended(): boolean;
  /** Whether the customer wrote turns the model has not read yet (and did not end the conversation). */
  unread(): boolean;
  /** The agent's message joins the transcript; then the wait for the customer's answer. */
  message(step: number, text: string): Promise<CustomerReply>;
  /** The workflow asks the customer to confirm a write; their next message is the answer. */
  consent(step: number, request: ConsentRequest): Promise<ConsentReply>;
}

export class Conversation {
  transcript: Transcript;
  private readonly idleMs: number;
  /** The turns the model had been shown when it last decided: later customer turns are news to it. */
  private shown = 0;

  constructor(
    readonly input: ConversationInput | undefined,
    carried: Transcript | undefined,
    private readonly waits: Waits,
    /** Whether the run goes on, and the step it is at. */
    private readonly run: () => { running: boolean; step: number },
  ) {
    this.transcript = carried ?? EMPTY_TRANSCRIPT;
    this.idleMs = (input?.idle_timeout_seconds ?? DEFAULT_IDLE_TIMEOUT_SECONDS) * 1000;
  }

  /** The `say` Update's validator: a refused message changes nothing and leaves no trace in the history. */
  validate(raw: unknown): SayRequest {
    const check = checkSay(raw, {
      conversation: this.input !== undefined,
      running: this.run().running,
      ended: this.transcript.ended === true,
      unanswered: unansweredOf(this.transcript),
    });
    if (!check.ok)
      throw ApplicationFailure.create({ type: 'InvalidMessage', message: check.error, nonRetryable: true });
    return check.say;
  }

  /** The `say` Update: the customer's turn joins the transcript at once (a waiting run resumes). */
  say(raw: SayRequest): SayReceipt {
    // Validators do not run on replay: the handler checks again (same state, same outcome).
    const say = this.validate(raw);
    const awaited = this.waits.customer !== undefined;
    this.transcript = withTurn(this.transcript, {
      from: 'customer',
      text: say.text ?? '',
      step: this.run().step,
      ...(say.end ? { end: true as const } : {}),
    });
    return { n: this.transcript.total, awaited, ended: this.transcript.ended === true };
  }

  /** The transcript a conversation carries into its next run and its result; undefined: not a conversation. */
  carried(): Transcript | undefined {
    return this.input === undefined ? undefined : this.transcript;
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
        this.transcript = withTurn(this.transcript, { from: 'agent', text: boundedMessage(text), step });
        awaiting();
        const shown = this.shown;
        const arrived = () => this.transcript.ended === true || newsSince(this.transcript, shown);
        // A message sent while the model decided is already there: no wait at all.
        const answered = arrived() || (await this.customerTurn(arrived, awaiting, "the customer's reply", 'TEXT'));
        if (!answered) return 'idle';
        return this.transcript.ended ? 'ended' : 'answered';
      },
      consent: async (step, request) => {
        const text = consentQuestion(request);
        this.transcript = withTurn(this.transcript, { from: 'agent', text, step, consent: request });
        awaiting();
        // Only a message written after the question answers it (one sent earlier did not see it).
        const asked = this.transcript.total;
        const reply = () => this.transcript.turns.find((turn) => turn.from === 'customer' && turn.n > asked);
        const arrived = () => this.transcript.ended === true || reply() !== undefined;
        const about = `the customer's consent to ${request.tool}`;
        if (!arrived() && !(await this.customerTurn(arrived, awaiting, about, 'yes'))) return { reply: 'idle' };
        const answer = reply();
        // The customer's last word ends the conversation, whatever it says.
        if (this.transcript.ended || !answer) return { reply: 'ended' };
        return { reply: 'answered', text: answer.text };
      },
    };
  }

  /** The durable wait for the customer; `waiting` runs once its deadline is set (the details show it). */
  private customerTurn(arrived: () => boolean, waiting: () => void, awaited: string, reply: string): Promise<boolean> {
    const command = `agent say ${workflowInfo().workflowId} ${reply}`;
    const turn = this.waits.customerTurn(this.idleMs, arrived, `${awaited} awaited — ${command}`);
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
