// A span per step of the agent loop (`step <n>`), in a traced run only: the decision and the tool
// calls the step schedules are its children. Whether a run is traced is the interceptors' choice
// (otel-interceptors.ts: its start carried a trace context), recorded here by run id, so a run
// without tracing makes no span and consumes nothing; a span emits no command, and its end is
// exported through a sink that replay does not call, so a traced run replays the same.
import { SpanStatusCode, trace } from '@opentelemetry/api';
import { ContinueAsNew, workflowInfo } from '@temporalio/workflow';

/** The runs of this worker's workflow context that are traced (a context may run several). */
const tracedRuns = new Set<string>();

export function markRunTraced(runId: string): void {
  tracedRuns.add(runId);
}

export function forgetRun(runId: string): void {
  tracedRuns.delete(runId);
}

/** Runs `fn` inside the span of step `step` when the run is traced; else just runs it. */
export function inStepSpan<T>(step: number, fn: () => Promise<T>): Promise<T> {
  // No traced run in this context (the usual case, and the loop's in-process tests): no lookup.
  if (tracedRuns.size === 0 || !tracedRuns.has(workflowInfo().runId)) return fn();
  return trace
    .getTracer('durable-react-agent')
    .startActiveSpan(`step ${step}`, { attributes: { 'agent.step': step } }, async (span) => {
      try {
        return await fn();
      } catch (err) {
        if (!(err instanceof ContinueAsNew)) span.setStatus({ code: SpanStatusCode.ERROR });
        throw err;
      } finally {
        span.end();
      }
    });
}
