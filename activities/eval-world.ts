// The evaluation's world (npm run eval; on only when AGENT_EVAL_DIR is set): every run sees the
// support data, the refunds database and the tool faults of its own scenario, so scenarios with
// different users, policies and failures share one fleet of workers. The harness writes
// `<dir>/<workflow id>.json` (common/eval-faults.ts) and seeds `<dir>/<workflow id>.sqlite`
// before it starts the run; the tools find them by the workflow id of the activity they run in.
// Faults are matched by tool, step and attempt, all recorded by Temporal, so a retried attempt on
// another worker (after a SIGKILL) meets the same fault schedule the first one did.
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { COMMIT_FAULTS, evalRunFileName } from '../common/eval-faults';
import type { EvalRunFile, ToolFault } from '../common/eval-faults';
import type { EffectFaults } from '../common/tool-catalog';
import { TOOL_REGISTRY } from '../domains/wired';
import type { DataSource, SupportData } from '../domains/support/data';
import type { Observation, ToolInput } from '../common/types';
import { stepTagOf } from '../common/step-tag';
import { readEnv } from '../runtime/env-vars';
import { envelope } from './envelope';
import { RefundService } from './refunds/service';
import { sleepUnlessAborted } from './tools/tool-activity';
import type { ToolFn } from './tools/tool-activity';

export interface EvalWorld {
  data: DataSource;
  refunds: () => RefundService;
  /** Read on each refund attempt (getters): the current run's commit faults. */
  refundFaults: EffectFaults;
  /** Wraps every tool with the current run's call faults. */
  wrap<T extends Record<string, ToolFn>>(tools: T): T;
}

export function evalWorldFromEnv(env: NodeJS.ProcessEnv = process.env): EvalWorld | undefined {
  const dir = readEnv('AGENT_EVAL_DIR', env);
  return dir ? evalWorld(dir) : undefined;
}

export function evalWorld(dir: string): EvalWorld {
  const currentRun = () => Context.current().info.workflowExecution?.workflowId ?? '';
  const runFile = (): EvalRunFile<SupportData> => {
    const file = path.join(dir, evalRunFileName(currentRun(), 'json'));
    try {
      return JSON.parse(readFileSync(file, 'utf8')) as EvalRunFile<SupportData>;
    } catch (err) {
      // Not one of the eval's runs: an outage as the data source would report it.
      throw new Error(`eval world: no scenario file for this run (${file})`, { cause: err });
    }
  };
  const services = new Map<string, RefundService>();
  const commitFault = (kind: ToolFault['kind']): number => {
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
    refundFaults: {
      get pauseBeforeCommitMs() {
        return commitFault('timeout_before_commit');
      },
      get pauseAfterCommitMs() {
        return commitFault('timeout_after_commit');
      },
    },
    wrap: (tools) => withCallFaults(tools, () => runFile().faults),
  };
}

function withCallFaults<T extends Record<string, ToolFn>>(tools: T, faultsOfRun: () => ToolFault[]): T {
  const wrapped: Record<string, ToolFn> = { ...tools };
  for (const [name, tool] of Object.entries(tools)) {
    // A named function expression keeps the activity's registered name.
    wrapped[name] = {
      [name]: async (input: ToolInput): Promise<Observation> => {
        const ctx = Context.current();
        const step = stepTagOf(input)?.step;
        const fault = faultsOfRun().find(
          (f) => f.tool === name && !COMMIT_FAULTS.includes(f.kind) && (f.step === undefined || f.step === step),
        );
        if (!fault) return tool(input);
        return injected(fault, ctx, name, () => tool(input));
      },
    }[name]!;
  }
  return wrapped as T;
}

const BROKEN_RECORD = { record: '{"price_usd": 49.0, "plan": "pro_mon', note: null, fields: [null, -1, 'NaN'] };

async function injected(fault: ToolFault, ctx: Context, name: string, run: () => Promise<Observation>) {
  const { attempt } = ctx.info;
  const hits = attempt <= (fault.attempts ?? 1);
  switch (fault.kind) {
    case 'error':
      if (hits) throw ApplicationFailure.retryable(`eval fault: ${name} failed (attempt ${attempt})`, 'EvalFault');
      return run();
    case 'timeout': {
      if (!hits) return run();
      // Past the start-to-close timeout: Temporal gives up on this attempt and retries.
      const timeoutMs = (TOOL_REGISTRY[name]?.timeoutSeconds ?? 10) * 1000;
      await sleepUnlessAborted(timeoutMs + 2000, ctx.cancellationSignal);
      throw ApplicationFailure.retryable(`eval fault: ${name} hung past its timeout`, 'EvalFault');
    }
    case 'slow':
      await sleepUnlessAborted(fault.ms ?? 1000, ctx.cancellationSignal);
      return run();
    default: {
      // The answer is replaced, under the real source's name: the tool ran (a refund did commit),
      // only what came back is wrong, as with a faulty or lagging backend.
      const real = await run();
      const answer = (data: unknown, ok = fault.ok ?? true) => envelope(name, real.source, ok, data);
      if (fault.kind === 'oversized') return answer({ blob: 'x'.repeat(fault.bytes ?? 100_000) }, true);
      if (fault.kind === 'malformed') return answer(fault.data ?? BROKEN_RECORD);
      // stale, conflicting, empty: a plausible answer that disagrees with the source of truth.
      return answer(fault.data ?? {});
    }
  }
}
