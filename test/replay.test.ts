// Determinism guard: the recorded histories in test/fixtures/histories must replay against the
// current workflow code. A change that alters the command sequence of an existing run fails
// here; guard it with `patched()` and record new histories (scripts/record-histories.ts).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { DeterminismViolationError } from '@temporalio/workflow';
import { Worker } from '@temporalio/worker';
import { NO_METRICS_SINKS } from '../worker/metrics';
import { workflowCode } from '../worker/workflow-bundle';
import { REPO_ROOT } from './helpers/harness';
import { BATCHED_UPSERTS_PATCH, EFFECTS_PATCH, FAULTS_PATCH, FINAL_VALIDATOR_PATCH } from '../workflows/patches';
import { SEARCH_ATTRIBUTES_PATCH } from '../common/search-attributes';

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

  it('has recorded histories of runs taking each patched path', () => {
    const recorded = new Set(files.flatMap(patchesIn));
    for (const patch of [
      EFFECTS_PATCH,
      FAULTS_PATCH,
      SEARCH_ATTRIBUTES_PATCH,
      BATCHED_UPSERTS_PATCH,
      FINAL_VALIDATOR_PATCH,
    ]) {
      assert.ok(recorded.has(patch), `a history recorded with ${patch} (scripts/record-histories.ts)`);
    }
    // The newest patch stands for the older ones: a run recording it records no other marker.
    for (const newest of [BATCHED_UPSERTS_PATCH, FINAL_VALIDATOR_PATCH]) {
      for (const file of files.filter((f) => patchesIn(f).includes(newest))) {
        assert.deepEqual(patchesIn(file), [newest], file);
      }
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

  it('fails when the workflow code no longer matches (the check is live)', async () => {
    await assert.rejects(
      Worker.runReplayHistory(
        { workflowsPath: require.resolve('./fixtures/altered-workflows') },
        load('refund-success.json'),
      ),
      (err: unknown) => err instanceof DeterminismViolationError,
    );
  });
});
