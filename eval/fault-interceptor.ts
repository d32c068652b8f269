// The eval worker's activity interceptor: a tool activity meets the call faults of its run's
// scenario (eval/faults.ts) around the real tool. Faults are matched by tool, step and attempt, all
// recorded by Temporal, so a retried attempt on another worker (after a SIGKILL) meets the same
// fault schedule the first one did. Only tool activities are touched: `decide`, `llm_pricing` and
// `reconcile_<tool>` pass through, and a refund's commit faults are the refund tool's own
// (eval/world.ts).
import { ApplicationFailure } from '@temporalio/activity';
import type { Context } from '@temporalio/activity';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { envelope } from '../activities/tools/envelope';
import { HEARTBEAT_EVERY_MS, sleepUnlessAborted } from '../activities/tools/tool-activity';
import { stepTagOf } from '../common/temporal/step-tag';
import { LOCAL_CALL_FIELD, localCallOf } from '../common/temporal/local-call';
import type { Observation } from '../common/types';
import { DOMAINS, registryOfDomain } from '../domains/index';
import { COMMIT_FAULTS } from './faults';
import type { ToolFault } from './faults';

/** The scenarios run the support domain: its tools. */
const SUPPORT_TOOLS = registryOfDomain(DOMAINS.support!);

/** `faultsOfRun` is read in the activity's context: the faults of the run the activity belongs to. */
export function callFaultInterceptor(faultsOfRun: () => ToolFault[]): ActivityInterceptorsFactory {
  return (ctx) => ({
    inbound: {
      async execute(input, next) {
        const name = ctx.info.activityType;
        if (SUPPORT_TOOLS[name] === undefined) return next(input);
        const step = stepTagOf(input.args[0])?.step;
        const fault = faultsOfRun().find(
          (f) => f.tool === name && !COMMIT_FAULTS.includes(f.kind) && (f.step === undefined || f.step === step),
        );
        if (!fault) return next(input);
        return injected(fault, ctx, name, () => next(input) as Promise<Observation>);
      },
    },
  });
}

const BROKEN_RECORD = { record: '{"price_usd": 49.0, "plan": "pro_mon', note: null, fields: [null, -1, 'NaN'] };

async function injected(
  fault: ToolFault,
  ctx: Context,
  name: string,
  run: () => Promise<Observation>,
): Promise<Observation> {
  const { attempt } = ctx.info;
  const hits = attempt <= (fault.attempts ?? 1);
  switch (fault.kind) {
    case 'error':
      if (hits) throw ApplicationFailure.retryable(`eval fault: ${name} failed (attempt ${attempt})`, 'EvalFault');
      return run();
    case 'timeout': {
      if (!hits) return run();
      // No heartbeats, past the start-to-close timeout: Temporal gives up on this attempt (at its
      // heartbeat timeout, or its start-to-close one if it has none) and retries.
      const timeoutMs = (SUPPORT_TOOLS[name]?.timeoutSeconds ?? 10) * 1000;
      await sleepUnlessAborted(timeoutMs + 2000, ctx.cancellationSignal);
      throw ApplicationFailure.retryable(`eval fault: ${name} hung past its timeout`, 'EvalFault');
    }
    case 'slow': {
      // A slow backend, not a dead attempt: the wait heartbeats as the tool does while it runs,
      // so the 2 s heartbeat timeout does not cut it off.
      const beat = setInterval(() => ctx.heartbeat(), HEARTBEAT_EVERY_MS);
      try {
        await sleepUnlessAborted(fault.ms ?? 1000, ctx.cancellationSignal);
      } finally {
        clearInterval(beat);
      }
      return run();
    }
    default: {
      // The answer is replaced, under the real source's name: the tool ran (a refund did commit),
      // only what came back is wrong, as with a faulty or lagging backend.
      const real = await run();
      // A local call's echo of its input (common/temporal/local-call.ts) stays: the run's record reads its args there.
      const echo = localCallOf(real);
      const answer = (data: unknown, ok = fault.ok ?? true) => {
        const replaced = envelope(name, real.source, ok, data);
        return echo ? { ...replaced, [LOCAL_CALL_FIELD]: echo } : replaced;
      };
      if (fault.kind === 'oversized') return answer({ blob: 'x'.repeat(fault.bytes ?? 100_000) }, true);
      if (fault.kind === 'malformed') return answer(fault.data ?? BROKEN_RECORD);
      // stale, conflicting, empty: a plausible answer that disagrees with the source of truth.
      return answer(fault.data ?? {});
    }
  }
}
