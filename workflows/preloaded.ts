// The libraries a worker's workflow thread evaluates once and shares, frozen, between the runs it
// starts or replays (worker/workflow-bundle.ts PRELOADED_MODULES, the SDK's `preloadModules`), instead
// of evaluating them again for each run. Only libraries that keep no per-run state belong here.
// Through this module because the bundler drops a bare `require` of a package that declares no side
// effects (zod does), which is how the SDK preloads.
import * as zod from 'zod';

// zod sets its defaults (the English messages, the memoizer of containers) in its global config when
// the first schema is built; frozen after this module, that config must have them already.
zod.z.object({ preloaded: zod.z.string() });

export const preloaded: readonly unknown[] = [zod];
