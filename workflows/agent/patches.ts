// Where a patched() guard goes, when one is needed.
//
// The workflow is versioned by Worker Deployment Versions: a run is pinned to the version that
// started it and replays on that code, so a change of workflow code ships as a new version and
// needs no guard. At the 1.0 baseline this file was empty: every run took the one path there was.
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

/**
 * The run keeps the AgentWaiting search attribute (the operator's inbox) current: it upserts what it
 * waits for when that changes, and `none` when it ends. It must reach runs in flight so that the
 * inbox lists them too: the old path never upserts AgentWaiting, the new one does.
 *
 * @since Introduced in 1.1.0 (the Worker Deployment Version that first records it).
 */
export const WAITING_ATTRIBUTE_PATCH = 'waiting-attribute';

/**
 * A read-only tool call runs as a local activity (a MarkerRecorded event in the workflow's own task)
 * instead of a normal one (ActivityTaskScheduled/Started/Completed and a workflow task more): one
 * server round trip less per read (issue 32). Runs in flight replay their recorded normal
 * activities; a call they make after the new worker takes over runs locally.
 *
 * @since Introduced in 1.2.0 (the Worker Deployment Version that first records it).
 */
export const LOCAL_TOOLS_PATCH = 'read-only-local-activities';

/** The patch ids of the workflow code. */
export const PATCH_IDS: readonly string[] = [WAITING_ATTRIBUTE_PATCH, LOCAL_TOOLS_PATCH];
