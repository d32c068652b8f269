// The evaluation's world, served by the eval worker (eval/worker.ts): every run sees the support
// data, the refunds database and the tool faults of its own scenario, so scenarios with different
// users, policies and failures share one fleet of workers. The harness writes
// `<dir>/<workflow id>.json` (eval/faults.ts) and seeds `<dir>/<workflow id>.sqlite` before it
// starts the run; the tools find them by the workflow id of the activity they run in.
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { Context } from '@temporalio/activity';
import type { ActivityDeps } from '../activities';
import { RefundService } from '../domains/support/backend/refunds/service';
import type { SupportData } from '../domains/support/data';
import { COMMIT_FAULTS, evalRunFileName } from './faults';
import type { EvalRunFile, ToolFault } from './faults';

export interface EvalWorld extends Required<Pick<ActivityDeps, 'data' | 'refunds' | 'refundFaults'>> {
  /** The current run's faults (its scenario file, read on each call). */
  faultsOfRun(): ToolFault[];
}

export function evalWorld(dir: string): EvalWorld {
  const currentRun = () => Context.current().info.workflowExecution?.workflowId ?? '';
  const runFilePath = () => path.join(dir, evalRunFileName(currentRun(), 'json'));
  const runFile = (): EvalRunFile<SupportData> => {
    const file = runFilePath();
    try {
      return JSON.parse(readFileSync(file, 'utf8')) as EvalRunFile<SupportData>;
    } catch (err) {
      // Not one of the eval's runs: an outage as the data source would report it.
      throw new Error(`eval world: no scenario file for this run (${file})`, { cause: err });
    }
  };
  const services = new Map<string, RefundService>();
  const commitFault = (kind: ToolFault['kind']): number => {
    // The retail writes of the τ² suite's runs read these too: a run with no scenario file has no faults.
    if (!existsSync(runFilePath())) return 0;
    const fault = runFile().faults.find((f) => f.kind === kind && COMMIT_FAULTS.includes(f.kind));
    return fault ? (fault.ms ?? 4000) : 0;
  };
  return {
    data: () => Promise.resolve(runFile().data),
    refunds: () => {
      const file = path.join(dir, evalRunFileName(currentRun(), 'sqlite'));
      let service = services.get(file);
      if (!service) services.set(file, (service = RefundService.open(file)));
      return service;
    },
    // Getters: the refund tool reads them on each attempt, so each run meets its own commit faults.
    refundFaults: {
      get pauseBeforeCommitMs() {
        return commitFault('timeout_before_commit');
      },
      get pauseAfterCommitMs() {
        return commitFault('timeout_after_commit');
      },
    },
    faultsOfRun: () => runFile().faults,
  };
}
