// What a worker's workflow thread evaluates once and shares between runs (workflows/preloaded.ts):
// the prebuilt bundles, loaded into the SDK's reused V8 context as a worker loads them, hold zod and
// the schema cache in the context's shared module cache, while the agent's own modules stay per run.
// Without the preload, every run evaluated zod and rebuilt every schema (docs/benchmark.md, the
// per-step cost); a bundler that dropped the preload's require (it did once) fails here.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ReusableVMWorkflowCreator } from '@temporalio/worker/lib/workflow/reusable-vm';
import { PREBUILT_BUNDLES } from '../../worker/workflow-bundle';
import { sharedAcrossRuns } from '../../common/shared-across-runs';

/** The webpack module id the bundle gives a module whose path ends so. */
function moduleId(code: string, suffix: string): string {
  const match = new RegExp(`"([^"]*${suffix.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')})"`).exec(code);
  assert.ok(match, `the bundle has a module ${suffix}`);
  return match[1]!;
}

describe('modules preloaded into the workflow thread', () => {
  for (const bundle of PREBUILT_BUNDLES) {
    it(`${path.basename(bundle.file)}: zod and the schema cache are shared, the agent's modules are per run`, async () => {
      const code = fs.readFileSync(bundle.file, 'utf8');
      const noMap = { version: 3, sources: [], names: [], mappings: '', file: path.basename(bundle.file) };
      const creator = await ReusableVMWorkflowCreator.create(
        { code, filename: path.basename(bundle.file), sourceMap: noMap },
        5_000,
        new Set(),
      );
      try {
        // With no run active, the context's module cache answers from the modules shared by every run.
        const { context } = creator as unknown as { context: { __webpack_module_cache__: Record<string, unknown> } };
        const shared = context.__webpack_module_cache__;
        assert.ok(shared[moduleId(code, 'node_modules/zod/index.cjs')], 'zod');
        assert.ok(shared[moduleId(code, 'dist/common/shared-across-runs.js')], 'the schema cache');
        assert.equal(shared[moduleId(code, 'dist/common/input.js')], undefined, 'common/input.js is per run');
        assert.equal(shared[moduleId(code, 'dist/workflows/agent/agent.js')], undefined, 'the workflow is per run');
      } finally {
        await creator.destroy();
      }
    });
  }

  it('sharedAcrossRuns builds a value once, whoever asks again', () => {
    let builds = 0;
    const key = `test:${Math.random()}`;
    const first = sharedAcrossRuns(key, () => ({ built: ++builds }));
    const again = sharedAcrossRuns(key, () => ({ built: ++builds }));
    assert.equal(first, again);
    assert.equal(builds, 1);
  });
});
