// Property-based fuzzing of what the model answers, through the real openai client, a real worker
// process and the dev server: arbitrary text, JSON of the wrong shape, huge strings, deep nesting,
// hostile unicode. Every run must end with a defined stop reason, without a workflow task failure;
// the worker must survive (same pid); the history must stay bounded whatever the model sent.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fc from 'fast-check';
import { temporal } from '@temporalio/proto';
import { malformed } from '../../offline-model/scripted-replies';
import { MAX_ANSWER_BYTES } from '../../activities/decide/decide';
import { isStopReason } from '../../common/stop-reasons';
import { defaultAllowedToolsOf } from '../../domains/index';
import { supportDomain } from '../../domains/support/index';
import type { AgentResult } from '../../common/types';
import { agentFixture } from '../helpers/agent-fixture';

const MAX_STEPS = 4;
/**
 * Whatever the model sends, a run's history stays below this: per step at most one capped answer
 * (32 KiB) plus a decision payload of capped observations, and a result that repeats at most one
 * capped answer. A single 5 MB answer alone would be ten times this.
 */
const HISTORY_BOUND_BYTES = 512 * 1024;
const BATCH = 8;
const BATCHES = Number(process.env.FUZZ_BATCHES ?? 5); // 40 runs by default

const fixture = agentFixture({
  queue: 'fuzz',
  // The JSON-object contract (servers without tool calling): every answer is raw text. Native tool
  // calls are fuzzed where they are mapped (test/loop/native-tools.test.ts).
  workerEnv: { OPENAI_TIMEOUT_SECONDS: '30', AGENT_LLM_TOOL_MODE: 'json' },
  setup: () => {
    workerPid = fixture.worker.proc.pid!;
  },
});
let workerPid: number;
const seenReasons = new Map<string, number>();

// ---- what a model might answer -------------------------------------------------------------

const MB = 1024 * 1024;
const hostileChar = fc.constantFrom(
  '\u0000',
  '\u202e',
  '\u200b',
  '\ud800',
  '\udfff',
  '\ufeff',
  '\n',
  '"',
  '\\',
  '😀',
  'ß',
  '\u2028',
  '{',
  '[',
);
const anyText = fc.string({
  unit: fc.oneof(fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }), hostileChar),
  maxLength: 200,
});
const toolName = fc.oneof(
  fc.constantFrom(...defaultAllowedToolsOf(supportDomain), 'delete_user', '__proto__', 'constructor', 'toString', ''),
  anyText,
);
const argsValue = fc.oneof(
  fc.record({ user_id: fc.oneof(fc.integer(), fc.double(), fc.string(), fc.constant(null)) }, { requiredKeys: [] }),
  fc.record({ query: anyText }),
  fc.jsonValue({ maxDepth: 3 }),
);
const actionShaped = fc.record(
  {
    kind: fc.oneof(fc.constantFrom('tool', 'final', 'escalate', 'TOOL', ''), anyText),
    name: toolName,
    args: argsValue,
    answer: fc.oneof(anyText, fc.jsonValue({ maxDepth: 2 })),
    extra: fc.jsonValue({ maxDepth: 2 }),
  },
  { requiredKeys: [] },
);
/** Well-formed actions with odd contents, so runs go on for several steps and reach the tools. */
const validAction = fc.oneof(
  fc.record({
    kind: fc.constant('tool'),
    name: fc.constantFrom('get_user_profile', 'get_user_billing'),
    args: fc.record({ user_id: fc.oneof(fc.constantFrom(42, 7), fc.integer()) }),
  }),
  fc.record({
    kind: fc.constant('tool'),
    name: fc.constant('search_policy'),
    args: fc.record({ query: fc.oneof(anyText, fc.string({ minLength: 400, maxLength: 600 })) }),
  }),
  fc.record({ kind: fc.constant('final'), answer: anyText }),
);
const deep = fc.integer({ min: 10, max: 200_000 }).map((n) => '['.repeat(n) + ']'.repeat(n));
const deepArgs = fc
  .integer({ min: 10, max: 5_000 })
  .map((n) => `{"kind":"tool","name":"search_policy","args":{"query":${'['.repeat(n)}"x"${']'.repeat(n)}}}`);
const huge = fc.constantFrom(MAX_ANSWER_BYTES + 1, 256 * 1024, MB, 5 * MB).chain((size) =>
  fc.constantFrom(
    'x'.repeat(size),
    '{"kind":"final","answer":"ok"}' + ' '.repeat(size), // valid JSON once trimmed: still too large
    `{"kind":"final","answer":"${'€'.repeat(Math.ceil(size / 3))}"}`,
  ),
);

const content: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: anyText },
  { weight: 6, arbitrary: validAction.map((a) => JSON.stringify(a)) },
  { weight: 4, arbitrary: actionShaped.map((a) => JSON.stringify(a)) },
  { weight: 2, arbitrary: fc.json({ maxDepth: 4 }) },
  { weight: 1, arbitrary: deep },
  { weight: 1, arbitrary: deepArgs },
  { weight: 1, arbitrary: huge },
  { weight: 1, arbitrary: actionShaped.map((a) => JSON.stringify(a).slice(0, -1)) }, // truncated JSON
);
/** One run: up to MAX_STEPS answers; after them the model gives a valid final answer. */
const script = fc.array(content, { minLength: 1, maxLength: MAX_STEPS });

// ---- running and checking ------------------------------------------------------------------

async function fuzzRun(
  answers: string[],
): Promise<{ result: AgentResult; historyBytes: number; taskFailures: number }> {
  const { handle, result } = await fixture.run(
    (_req, i) => malformed(answers[i] ?? '{"kind":"final","answer":"done"}'),
    { budget: { max_steps: MAX_STEPS, max_seconds: 60 }, llm_max_attempts: 1 },
  );
  const history = await handle.fetchHistory();
  const historyBytes = temporal.api.history.v1.History.encode(history).finish().length;
  const taskFailures = (history.events ?? []).filter((e) => e.workflowTaskFailedEventAttributes).length;
  return { result, historyBytes, taskFailures };
}

function check(answers: string[], outcome: Awaited<ReturnType<typeof fuzzRun>>): void {
  const { result, historyBytes, taskFailures } = outcome;
  const what = `answers ${JSON.stringify(answers.map((a) => (a.length > 120 ? `${a.slice(0, 120)}… (${a.length} chars)` : a)))}`;
  assert.ok(
    isStopReason(result.stop_reason),
    `undefined stop reason ${JSON.stringify(result.stop_reason)} for ${what}`,
  );
  assert.equal(result.status, result.stop_reason === 'success' ? 'ok' : 'stopped', what);
  assert.equal(taskFailures, 0, `workflow task failed for ${what}`);
  assert.ok(historyBytes < HISTORY_BOUND_BYTES, `history of ${historyBytes} bytes for ${what}`);
  assert.ok(result.usage.steps <= MAX_STEPS, what);
  seenReasons.set(result.stop_reason, (seenReasons.get(result.stop_reason) ?? 0) + 1);
}

describe("fuzzing the model's answers", () => {
  it('known nasties: each ends with its expected reason and a small history', async () => {
    const cases: Array<[string, string[], string]> = [
      [
        'a 5 MB answer that is valid JSON once trimmed',
        ['{"kind":"final","answer":"ok"}' + ' '.repeat(5 * MB)],
        'invalid_action:too_large',
      ],
      ['5 MB of text', ['x'.repeat(5 * MB)], 'invalid_action:too_large'],
      ['200k levels of nesting', ['['.repeat(200_000) + ']'.repeat(200_000)], 'invalid_action:too_large'],
      ['nesting within the size cap', ['['.repeat(10_000) + ']'.repeat(10_000)], 'invalid_action:too_deep'],
      [
        'deeply nested args',
        [`{"kind":"tool","name":"search_policy","args":{"q":${'['.repeat(5000)}${']'.repeat(5000)}}}`],
        'invalid_action:too_deep',
      ],
      [
        'a tool name of 20k characters',
        [JSON.stringify({ kind: 'tool', name: 'n'.repeat(20_000), args: {} })],
        `tool_denied:${'n'.repeat(64)}…`,
      ],
      [
        'a lone surrogate and a NUL in the tool name',
        ['{"kind":"tool","name":"\\ud800\\u0000x","args":{}}'],
        'tool_denied:??x',
      ],
      ['__proto__ as tool name', ['{"kind":"tool","name":"__proto__","args":{}}'], 'tool_denied:__proto__'],
      [
        '__proto__ smuggling in the action',
        ['{"kind":"final","answer":"x","__proto__":{"kind":"tool"}}'],
        'invalid_action:extra_keys',
      ],
      ['an empty answer', [''], 'invalid_action:bad_json'],
      ['JSON null', ['null'], 'invalid_action:not_object'],
      ['a right-to-left override in a final answer', ['{"kind":"final","answer":"\\u202eok"}'], 'success'],
    ];
    const outcomes = await Promise.all(cases.map(([, answers]) => fuzzRun(answers)));
    cases.forEach(([what, answers, expected], i) => {
      check(answers, outcomes[i]!);
      assert.equal(outcomes[i]!.result.stop_reason, expected, what);
    });
    // A 5 MB answer leaves a history of a few kilobytes, not megabytes.
    assert.ok(outcomes[0]!.historyBytes < 64 * 1024, `5 MB answer: history of ${outcomes[0]!.historyBytes} bytes`);
  });

  it(`property: ${BATCH * BATCHES} runs of arbitrary answers, ${BATCH} at a time`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(script, { minLength: BATCH, maxLength: BATCH }), async (batch) => {
        const outcomes = await Promise.all(batch.map((answers) => fuzzRun(answers)));
        batch.forEach((answers, i) => check(answers, outcomes[i]!));
      }),
      { numRuns: BATCHES, endOnFailure: true },
    );
    console.error(`fuzz: stop reasons seen ${JSON.stringify(Object.fromEntries([...seenReasons].sort()))}`);
    assert.ok(seenReasons.size >= 4, 'the fuzzer reached several different stop reasons');
  });

  it('the worker never crashed: the same process is still running and logged no crash', () => {
    assert.equal(fixture.worker.proc.pid, workerPid);
    assert.equal(fixture.worker.proc.exitCode, null);
    assert.equal(fixture.worker.proc.signalCode, null);
    assert.doesNotMatch(fixture.worker.output(), /Maximum call stack|Unhandled|FATAL|out of memory/i);
  });
});
