// Where a patched() guard goes, when one is needed.
//
// The workflow is versioned by Worker Deployment Versions: a run is pinned to the version that
// started it and replays on that code, so a change of workflow code ships as a new version and
// needs no guard. This file starts empty at the 1.0 baseline: every run takes the one path there is.
//
// patched() is only for a change that must reach runs already in flight (a fix for pinned runs
// that cannot wait for them to end). Then add its id here, in the style below, and branch on
// `patched(<ID>)` where the behaviour differs; record histories that take both paths
// (scripts/record-histories.ts) so test/durability/replay.test.ts replays them:
//
//   /**
//    * What changed, and why it must reach runs in flight: the old path, the new one.
//    *
//    * @since Introduced in 1.1.0 (the Worker Deployment Version that first records it).
//    */
//   export const SOME_FIX_PATCH = 'some-fix';
//
// and list the id in PATCH_IDS (test/durability/replay.test.ts refuses a marker not listed there).

/** The patch ids of the workflow code: none at the 1.0 baseline. */
export const PATCH_IDS: readonly string[] = [];
