// A read-only tool call run as a local activity leaves one marker in history, with its result and
// no input: the result echoes the call's step, arguments and key (common/temporal/local-call.ts).
// The workflow strips the echo before anything else sees the observation, and the one history
// reader (client/history/read-history.ts) turns the marker into the same tool call record a normal
// activity gives. Markers are read from histories anyone may have written: hostile ones never throw.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fc from 'fast-check';
import { defaultPayloadConverter } from '@temporalio/common';
import Long from 'long';
import { msNumberToTs } from '@temporalio/common/lib/time';
import { localCallOf, withLocalCall, withoutLocalCall, LOCAL_CALL_FIELD } from '../../common/temporal/local-call';
import type { Observation } from '../../common/types';
import { readRunHistory } from '../../client/history/read-history';
import type { HistoryEvent } from '../../client/history/read-history';
import { runRecordOf } from '../../eval/run-record';
import { decodeJson, HandMadeHistory } from '../helpers/hand-made-history';
import { agentInput } from '../helpers/harness';

const json = fc.jsonValue();
const observation = fc.record({
  tool: fc.string(),
  ok: fc.boolean(),
  data: json,
  source: fc.string(),
  bytes: fc.nat(),
  truncated: fc.boolean(),
}) as fc.Arbitrary<Observation>;
const args = fc.dictionary(fc.string(), json);

describe('the local call echo', () => {
  it('what the workflow keeps of a local result is the observation the tool returned', () => {
    fc.assert(
      fc.property(observation, args, fc.nat(), fc.string(), (obs, a, step, key) => {
        const echoed = withLocalCall(obs, { args: a, idempotency_key: key, trace: { step, role: 'tool' } });
        assert.deepEqual(localCallOf(echoed), { trace: { step, role: 'tool' }, args: a, idempotency_key: key });
        assert.deepEqual(withoutLocalCall(echoed), { ...obs });
      }),
    );
  });

  it('a result without a well-formed echo has none, and nothing throws', () => {
    fc.assert(
      fc.property(json, fc.anything(), (value, echo) => {
        const hostile = typeof value === 'object' && value !== null ? { ...value, [LOCAL_CALL_FIELD]: echo } : value;
        const found = localCallOf(hostile);
        if (found) {
          assert.ok(Number.isSafeInteger(found.trace.step));
          assert.equal(typeof found.args, 'object');
        }
        withoutLocalCall(hostile as unknown as Observation);
      }),
    );
  });
});

describe('a local tool call in history', () => {
  it('reads as the tool call a normal activity records: step, args, outcome, observation without the echo', async () => {
    const h = new HandMadeHistory(agentInput())
      .decide(1, { kind: 'tool', name: 'get_user_profile', args: { user_id: 42 } })
      .localTool(1, 'get_user_profile', { user_id: 42 }, { observation: { ok: true, data: { tier: 'pro' } } }, 2)
      .decide(2, { kind: 'tool', name: 'search_policy', args: { query: 'refund' } })
      .localTool(2, 'search_policy', { query: 'refund' }, { failed: 'timed_out' })
      .decide(3, { kind: 'tool', name: 'get_user_billing', args: { user_id: 42 } })
      .localTool(3, 'get_user_billing', { user_id: 42 }, { failed: 'failed' });
    const record = runRecordOf(await readRunHistory('w', [{ events: h.events }], decodeJson));
    assert.deepEqual(
      record.calls.map((c) => [c.step, c.tool, c.outcome, c.attempts]),
      [
        [1, 'get_user_profile', 'ok', 2],
        [2, 'search_policy', 'timed_out', 1],
        [3, 'get_user_billing', 'failed', 1],
      ],
    );
    assert.deepEqual(record.calls[0]!.args, { user_id: 42 });
    assert.deepEqual(record.calls[0]!.observation?.data, { tier: 'pro' });
    assert.ok(!(LOCAL_CALL_FIELD in record.calls[0]!.observation!));
  });

  it('hostile markers (any data, any result, any failure) never make the reader throw', async () => {
    const bytes = fc.uint8Array({ maxLength: 64 });
    const marker = fc.record({
      data: fc.oneof(
        bytes,
        json.map((v) => Buffer.from(JSON.stringify(v))),
      ),
      result: fc.option(fc.anything().map((v) => defaultPayloadConverter.toPayload(safe(v))!)),
      failure: fc.option(fc.record({ message: fc.option(fc.string()), timeoutFailureInfo: fc.option(fc.object()) })),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(marker, { maxLength: 4 }), async (markers) => {
        const h = new HandMadeHistory(agentInput()).decide(1, { kind: 'final', answer: 'x' });
        const events: HistoryEvent[] = [...h.events];
        for (const [i, m] of markers.entries())
          events.push({
            eventId: Long.fromNumber(100 + i),
            eventTime: msNumberToTs(1_700_000_001_000 + i),
            markerRecordedEventAttributes: {
              markerName: 'core_local_activity',
              details: {
                data: { payloads: [{ metadata: { encoding: Buffer.from('json/plain') }, data: m.data }] },
                ...(m.result ? { result: { payloads: [m.result] } } : {}),
              },
              ...(m.failure ? { failure: m.failure } : {}),
            },
          } as HistoryEvent);
        const history = await readRunHistory('w', [{ events }], decodeJson);
        runRecordOf(history);
      }),
      { numRuns: 200 },
    );
  });
});

/** A value the JSON payload converter can encode (fc.anything() makes some it cannot: functions, cycles). */
function safe(v: unknown): unknown {
  try {
    return JSON.parse(JSON.stringify(v) ?? 'null');
  } catch {
    return null;
  }
}
