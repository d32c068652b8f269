// What a worker's workflow thread evaluates once and shares, frozen, between the runs it starts or
// replays (worker/workflow-bundle.ts PRELOADED_MODULES, the SDK's `preloadModules`), instead of
// evaluating it again for each run: zod, and the cache of the schemas the modules build at load
// (common/shared-across-runs.ts; its map is out of the freeze's reach). Only what keeps no run's state.
// Through this module because the bundler drops a bare `require` of a package that declares no side
// effects (zod does), which is how the SDK preloads.
import * as zod from 'zod';
import * as sharedAcrossRuns from '../common/shared-across-runs';

// zod sets its defaults (the English messages, the memoizer of containers) in its global config when
// the first schema is built; frozen after this module, that config must have them already.
zod.z.object({ preloaded: zod.z.string() });

export const preloaded: readonly unknown[] = [zod, sharedAcrossRuns];
