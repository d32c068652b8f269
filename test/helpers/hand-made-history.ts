// Temporal histories written by hand, for tests of code that reads histories (eval/run-record.ts):
// the events a run of the agent workflow records, with payloads in the default converter's JSON,
// at the times the test chooses. Only the fields the readers look at are filled in.
import { defaultPayloadConverter } from '@temporalio/common';
import type { Payload } from '@temporalio/common';
import { msNumberToTs } from '@temporalio/common/lib/time';
import Long from 'long';
import type { DecodePayloads, HistoryEvent } from '../../client/history/read-history';
import type { Action } from '../../common/contract';
import type { AgentInput, AgentResult, Observation } from '../../common/types';

export const decodeJson: DecodePayloads = async (payloads, index = 0) => {
  const payload = payloads?.[index];
  return payload ? defaultPayloadConverter.fromPayload(payload) : undefined;
};

const enc = (value: unknown): Payload => defaultPayloadConverter.toPayload(value)!;

export type ToolOutcome =
  | { observation: Partial<Observation> & { ok: boolean; data: unknown } }
  | { failed: 'failed' | 'timed_out' | 'cancelled' };

export class HandMadeHistory {
  readonly events: HistoryEvent[] = [];
  private nextId = 1;
  /** ms since the epoch of the next event; advance it with at(). */
  private nowMs = 1_700_000_000_000;

  constructor(input: AgentInput) {
    this.push({ workflowExecutionStartedEventAttributes: { input: { payloads: [enc(input)] } } });
  }

  /** Moves the clock to `ms` after the start. */
  at(ms: number): this {
    this.nowMs = 1_700_000_000_000 + ms;
    return this;
  }

  /** The model's decision at `step` (its text is the action as JSON), with its token usage. */
  decide(step: number, action: Action | string, tokens = 100): this {
    const id = this.schedule('decide', {
      payload: {},
      idempotency_key: `k:decide:${step}`,
      trace: { step, role: 'decide' },
    });
    this.push({
      activityTaskCompletedEventAttributes: {
        scheduledEventId: id,
        result: {
          payloads: [
            enc({
              text: typeof action === 'string' ? action : JSON.stringify(action),
              model: 'hand-made',
              usage: { prompt_tokens: tokens, completion_tokens: 0, total_tokens: tokens },
            }),
          ],
        },
      },
    });
    return this;
  }

  /** A tool activity at `step`; `attempts` > 1 records the retries Temporal made (the started event's attempt). */
  tool(step: number, name: string, args: Record<string, unknown>, outcome: ToolOutcome, attempts = 1): this {
    const id = this.schedule(name, {
      args,
      idempotency_key: `k:${step}:${name}`,
      principal_user_id: 0,
      trace: { step, role: 'tool' },
    });
    this.push({ activityTaskStartedEventAttributes: { scheduledEventId: id, attempt: attempts } });
    if ('observation' in outcome) {
      const observation = {
        tool: name,
        source: 'hand-made',
        trust: 'untrusted_data',
        bytes: 10,
        truncated: false,
        ...outcome.observation,
      };
      this.push({
        activityTaskCompletedEventAttributes: { scheduledEventId: id, result: { payloads: [enc(observation)] } },
      });
    } else if (outcome.failed === 'failed') {
      this.push({ activityTaskFailedEventAttributes: { scheduledEventId: id, failure: { message: 'boom' } } });
    } else if (outcome.failed === 'timed_out') {
      this.push({ activityTaskTimedOutEventAttributes: { scheduledEventId: id } });
    } else {
      this.push({ activityTaskCanceledEventAttributes: { scheduledEventId: id } });
    }
    return this;
  }

  /**
   * A read run as a local activity: one core_local_activity marker, with the SDK's marker data and
   * the result echoing the call (common/temporal/local-call.ts); a failed one has a failure, no result.
   */
  localTool(step: number, name: string, args: Record<string, unknown>, outcome: ToolOutcome, attempt = 1): this {
    const data = { seq: this.nextId, attempt, activity_id: String(this.nextId), activity_type: name };
    const details: Record<string, { payloads: Payload[] }> = {
      data: { payloads: [enc(data)] },
    };
    let failure: object | undefined;
    if ('observation' in outcome) {
      const result = {
        tool: name,
        source: 'hand-made',
        trust: 'untrusted_data',
        bytes: 10,
        truncated: false,
        ...outcome.observation,
        local_call: { trace: { step, role: 'tool' }, args, idempotency_key: `k:${step}:${name}` },
      };
      details.result = { payloads: [enc(result)] };
    } else if (outcome.failed === 'timed_out') failure = { message: 'timed out', timeoutFailureInfo: {} };
    else if (outcome.failed === 'cancelled') failure = { message: 'cancelled', canceledFailureInfo: {} };
    else failure = { message: 'activity failed', cause: { message: 'boom' } };
    this.push({
      markerRecordedEventAttributes: { markerName: 'core_local_activity', details, ...(failure ? { failure } : {}) },
    });
    return this;
  }

  /** The lookup by key a run makes before it ends with an effect's outcome unknown. */
  reconcile(step: number, tool: string): this {
    const id = this.schedule(`reconcile_${tool}`, {
      idempotency_key: `k:${step}:${tool}`,
      settle: true,
      trace: { step, role: 'reconcile' },
    });
    this.push({
      activityTaskCompletedEventAttributes: {
        scheduledEventId: id,
        result: { payloads: [enc({ state: 'ambiguous' })] },
      },
    });
    return this;
  }

  cancelRequested(): this {
    this.push({ workflowExecutionCancelRequestedEventAttributes: { cause: 'test' } });
    return this;
  }

  completed(result: AgentResult): this {
    this.push({ workflowExecutionCompletedEventAttributes: { result: { payloads: [enc(result)] } } });
    return this;
  }

  private schedule(type: string, input: unknown): Long {
    return this.push({
      activityTaskScheduledEventAttributes: {
        activityType: { name: type },
        activityId: String(this.nextId),
        input: { payloads: [enc(input)] },
      },
    });
  }

  private push(attrs: Partial<HistoryEvent>): Long {
    const eventId = Long.fromNumber(this.nextId++);
    this.events.push({ eventId, eventTime: msNumberToTs(this.nowMs), ...attrs } as HistoryEvent);
    return eventId;
  }
}
