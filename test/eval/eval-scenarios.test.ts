// The scenario files (eval/scenarios/*.yaml) all parse, cover the error slices and the four
// reference cases, and a mistake in one is reported as one line naming the file and the field. The
// chaos schedule is a function of its seed.
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { prng } from '../../bench/stats';
import { chooseCancels, faultCycle } from '../../eval/harness/chaos';
import { loadScenarios, parseScenario, ScenarioError, SLICES } from '../../eval/scenario';
import { REPO_ROOT } from '../helpers/harness';

const DIR = path.join(REPO_ROOT, 'eval', 'scenarios');

describe('eval scenarios', () => {
  it('every file parses, and every slice and seed case is covered', () => {
    const scenarios = loadScenarios(DIR);
    assert.ok(scenarios.length >= 15, `${scenarios.length} scenarios`);
    assert.deepEqual([...new Set(scenarios.map((s) => s.slice))].sort(), [...SLICES].sort());
    const principals = scenarios.filter((s) => s.slice === 'seed').map((s) => s.principal);
    for (const seedCase of [42, 7, 404, 2001]) assert.ok(principals.includes(seedCase), `seed case ${seedCase}`);
    const faults = new Set(scenarios.flatMap((s) => s.faults.map((f) => f.kind)));
    for (const kind of [
      'timeout',
      'timeout_before_commit',
      'timeout_after_commit',
      'error',
      'slow',
      'malformed',
      'oversized',
      'stale',
      'conflicting',
      'empty',
    ])
      assert.ok(faults.has(kind as never), `fault ${kind}`);
  });

  it('reports every mistake of a file, one line each, naming the field', () => {
    const text = [
      'description: d',
      'slice: stale',
      'goal: g',
      'principal: -1',
      'allow: [get_user_profile]',
      'model: { script: [ { final: ok, extra: 1 } ] }',
      'faults: [ { tool: get_user_profile, kind: melt } ]',
      'expect: { stop_reason: policy_denied, tools: [get_user_profile] }',
    ].join('\n');
    assert.throws(
      () => parseScenario('x.yaml', text),
      (err: Error) => {
        assert.ok(err instanceof ScenarioError);
        const lines = err.message.split('\n');
        for (const field of ['slice', 'principal', 'model.script.0', 'faults.0.kind', 'expect.stop_reason'])
          assert.ok(
            lines.some((l) => l.startsWith(`x.yaml: ${field}: `)),
            `${field} in ${err.message}`,
          );
        return true;
      },
    );
    assert.throws(() => parseScenario('y.yaml', 'a: [unclosed'), /^ScenarioError: y\.yaml: not valid YAML/);
    assert.throws(() => loadScenarios(DIR, ['no-such-scenario']), /no scenario named no-such-scenario/);
  });

  it('the chaos schedule and the cancelled runs follow from the seed', () => {
    const runs = new Map([
      ['a', 4],
      ['b', 1],
      ['c', 5],
      ['d', 2],
    ]);
    const draw = (seed: number) => {
      const random = prng(seed);
      return { cycle: faultCycle(random, 2, true), cancels: [...chooseCancels(random, runs, 0.5)] };
    };
    assert.deepEqual(draw(7), draw(7));
    assert.notDeepEqual(draw(7), draw(8));
    const { cycle, cancels } = draw(7);
    assert.deepEqual(cycle.map((f) => f.kind).sort(), ['hang_worker', 'kill_worker', 'restart_server']);
    assert.equal(cancels.length, 2);
    for (const [id, step] of cancels) assert.ok(step >= 1 && step <= Math.min(3, runs.get(id)!));
  });
});
