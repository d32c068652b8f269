// GET /readyz: whether this worker can do work now. /healthz says the process runs; a worker that
// runs but cannot reach the Temporal server (a network cut, the server down) keeps polling in vain
// and is not ready. Ready = the worker's state is RUNNING and a check of the connection (the
// server's GetSystemInfo, with a short deadline) succeeded within the last CHECK_FRESH_MS.
import type { NativeConnection } from '@temporalio/worker';

/** How long a check's answer stands: probes in between reuse it (a probe flood is one call per second). */
export const CHECK_FRESH_MS = 1_000;
/** A check the server does not answer within this is a failure. */
export const CHECK_DEADLINE_MS = 2_000;

export interface Readiness {
  ready: boolean;
  /** One line: why not (or `ok`). */
  reason: string;
}

export type ReadinessCheck = () => Promise<Readiness>;

/** The check /readyz runs: the worker's state, then the server, one call at a time. */
export function workerReadiness(
  isRunning: () => boolean,
  connection: Pick<NativeConnection, 'withDeadline' | 'workflowService'>,
): ReadinessCheck {
  let last: { at: number; ok: boolean; reason: string } | undefined;
  let inFlight: Promise<void> | undefined;
  const checkServer = async (): Promise<void> => {
    try {
      await connection.withDeadline(Date.now() + CHECK_DEADLINE_MS, () => connection.workflowService.getSystemInfo({}));
      last = { at: Date.now(), ok: true, reason: 'ok' };
    } catch (err) {
      const first = String((err as Error)?.message ?? err)
        .split('\n')[0]!
        .replace(/\s+/g, ' ')
        .slice(0, 200);
      last = { at: Date.now(), ok: false, reason: `the Temporal server is unreachable (${first})` };
    }
  };
  return async () => {
    if (!isRunning()) return { ready: false, reason: 'the worker is not running' };
    if (!last || Date.now() - last.at > CHECK_FRESH_MS) {
      inFlight ??= checkServer().finally(() => (inFlight = undefined));
      await inFlight;
    }
    return { ready: last!.ok, reason: last!.reason };
  };
}
