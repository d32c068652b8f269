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
import { REPO_ROOT } from './helpers/harness';

const HISTORIES = path.join(REPO_ROOT, 'test', 'fixtures', 'histories');
const files = readdirSync(HISTORIES)
  .filter((f) => f.endsWith('.json'))
  .sort();

function load(file: string) {
  return historyFromJSON(JSON.parse(readFileSync(path.join(HISTORIES, file), 'utf8')));
}

describe('replay of recorded histories', () => {
  it('has recorded histories to replay', () => {
    assert.ok(files.length >= 4, `found ${files.length} histories in ${HISTORIES}`);
  });

  it('replays every recorded history against the current workflow code', async () => {
    const histories = files.map((file) => ({ workflowId: file, history: load(file) }));
    const results = Worker.runReplayHistories(
      { workflowsPath: require.resolve('../workflows'), sinks: NO_METRICS_SINKS },
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
