// A value built once per process and shared by every run its workflow thread starts or replays.
// The SDK evaluates a workflow's modules again for each run (its module cache is per run), which
// rebuilt every zod schema the modules define at load: about 10 ms of a worker's CPU per run
// (docs/benchmark.md, the per-step cost). This module is preloaded (workflows/preloaded.ts), so its
// map outlives the runs. Only for values that are the same for every run and hold no run's state:
// schemas built from constants. Outside a workflow (activities, the CLI) it is a plain cache.
const values = new Map<string, unknown>();

/** The value under `key`, built by `build` the first time any run asks. */
export function sharedAcrossRuns<T>(key: string, build: () => T): T {
  if (!values.has(key)) values.set(key, build());
  return values.get(key) as T;
}
