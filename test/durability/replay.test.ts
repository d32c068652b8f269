// Determinism guard: the recorded histories in test/fixtures/histories must replay against the
// current workflow code. A change that alters the command sequence of a run fails here: ship it as
// a new Worker Deployment Version and re-record (scripts/record-histories.ts), or, only if it must
// reach runs already in flight, guard it with `patched()` (workflows/agent/patches.ts).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { DeterminismViolationError } from '@temporalio/workflow';
import type { WorkflowInfo } from '@temporalio/workflow';
import { Worker } from '@temporalio/worker';
import { NO_METRICS_SINKS } from '../../worker/metrics';
import { workflowCode } from '../../worker/workflow-bundle';
import { REPO_ROOT } from '../helpers/harness';
import { PATCH_IDS } from '../../workflows/agent/patches';
import type { AgentResult } from '../../common/types';
import type { AttemptCharge } from '../../common/cost/budget';
import { ledgerOf } from '../../common/cost/cost';

const HISTORIES = path.join(REPO_ROOT, 'test', 'fixtures', 'histories');
const files = readdirSync(HISTORIES)
  .filter((f) => f.endsWith('.json'))
  .sort();

function load(file: string) {
  return historyFromJSON(JSON.parse(readFileSync(path.join(HISTORIES, file), 'utf8')));
}

/** The patch ids a recorded history's markers carry. */
function patchesIn(file: string): string[] {
  return (load(file).events ?? []).flatMap((e) => {
    const payload = e.markerRecordedEventAttributes?.details?.['patch-data']?.payloads?.[0];
    return payload?.data ? [(JSON.parse(Buffer.from(payload.data).toString('utf8')) as { id: string }).id] : [];
  });
}

describe('replay of recorded histories', () => {
  it('has recorded histories to replay', () => {
    assert.ok(files.length >= 4, `found ${files.length} histories in ${HISTORIES}`);
  });

  it('records no patch marker but the ones workflows/agent/patches.ts declares', () => {
    for (const file of files) {
      const unknown = patchesIn(file).filter((id) => !PATCH_IDS.includes(id));
      assert.deepEqual(unknown, [], file);
    }
  });

  it('replays every recorded history against the current workflow code', async () => {
    const histories = files.map((file) => ({ workflowId: file, history: load(file) }));
    // The code workers run: the prebuilt bundle (`npm run build`), or the sources bundled now if it is stale.
    const results = Worker.runReplayHistories(
      { ...workflowCode(undefined).options, sinks: NO_METRICS_SINKS },
      histories,
    );
    const failures: string[] = [];
    for await (const result of results) {
      if (result.error) failures.push(`${result.workflowId}: ${String(result.error)}`);
    }
    assert.deepEqual(failures, []);
  });

  it('counts the same cost on replay: every attempt of the history charged once, none twice', async () => {
    // What the workflow charges when a worker replays it (a new worker, a retried workflow task): the
    // sink is called during this replay, so it sees every charge the replay makes. One replay worker
    // for every history (the prebuilt bundle), the charges told apart by workflow id.
    const charges = new Map<string, AttemptCharge[]>(files.map((file) => [file, []]));
    const replays = Worker.runReplayHistories(
      {
        ...workflowCode(undefined).options,
        sinks: {
          agentMetrics: {
            ...NO_METRICS_SINKS.agentMetrics,
            llmAttempt: {
              fn: (info: WorkflowInfo, outcome: string, prompt: number, completion: number, cost: number) => {
                const charge = { prompt_tokens: prompt, completion_tokens: completion, cost_usd: cost };
                charges
                  .get(info.workflowId)
                  ?.push({ step: 0, attempt: 0, outcome: outcome as AttemptCharge['outcome'], ...charge });
              },
              callDuringReplay: true,
            },
          },
        },
      },
      files.map((file) => ({ workflowId: file, history: load(file) })),
    );
    for await (const replay of replays) assert.equal(replay.error, undefined, replay.workflowId);
    const checked: string[] = [];
    for (const file of files) {
      const history = load(file);
      const result = resultOf(history.events ?? []);
      if (!result) continue; // cancelled runs have no result
      // What the history holds: the attempts each decide activity reported (result or failure details).
      const recorded = (history.events ?? []).flatMap((e) => {
        const completed = e.activityTaskCompletedEventAttributes?.result?.payloads?.[0];
        const failed = e.activityTaskFailedEventAttributes?.failure?.applicationFailureInfo?.details?.payloads?.[0];
        const payload = completed ?? failed;
        return payload?.data ? ledgerOf(JSON.parse(Buffer.from(payload.data).toString('utf8'))) : [];
      });
      const charged = charges.get(file)!;
      const sum = (list: AttemptCharge[]) => Math.round(list.reduce((s, a) => s + a.cost_usd, 0) * 1e9) / 1e9;
      assert.equal(charged.length, recorded.length, `${file}: one charge per recorded attempt`);
      assert.equal(result.usage.charged_attempts ?? 0, recorded.length, file);
      assert.equal(sum(charged), result.usage.cost_usd ?? 0, file);
      assert.equal(sum(recorded), result.usage.cost_usd ?? 0, file);
      // Attempts are unique by step and attempt number: none counted twice.
      const keys = recorded.map((a) => `${a.step}/${a.attempt}`);
      assert.equal(new Set(keys).size, keys.length, file);
      checked.push(file);
    }
    assert.ok(checked.includes('retry-charged.json'), `checked ${checked.join(', ')}`);
    const retry = resultOf(load('retry-charged.json').events ?? [])!;
    assert.deepEqual(
      retry.usage.attempts?.map((a) => [a.step, a.attempt, a.outcome]),
      [
        [1, 1, 'failed'],
        [1, 2, 'failed'],
        [1, 3, 'ok'],
        [2, 1, 'ok'],
      ],
    );
  });

  it('fails when the workflow code no longer matches (the check is live)', async () => {
    await assert.rejects(
      Worker.runReplayHistory(
        { workflowsPath: require.resolve('../fixtures/altered-workflows') },
        load('refund-success.json'),
      ),
      (err: unknown) => err instanceof DeterminismViolationError,
    );
  });
});

/** The run's result, from its completion event (plain JSON: fixtures are recorded without a codec). */
function resultOf(events: NonNullable<ReturnType<typeof load>['events']>): AgentResult | undefined {
  const payload = events.find((e) => e.workflowExecutionCompletedEventAttributes)
    ?.workflowExecutionCompletedEventAttributes?.result?.payloads?.[0];
  return payload?.data ? (JSON.parse(Buffer.from(payload.data).toString('utf8')) as AgentResult) : undefined;
}
