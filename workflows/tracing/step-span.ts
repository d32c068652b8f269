// A span per step of the agent loop (`step <n>`), in a traced run only: the decision and the tool
// calls the step schedules are its children. Whether a run is traced is the interceptors' choice
// (otel-interceptors.ts: its start carried a trace context), recorded here by run id, so a run
// without tracing makes no span and consumes nothing; a span emits no command, and its end is
// exported through a sink that replay does not call, so a traced run replays the same.
// What people and the world did during a step (an approval, a consent answer, an effect, a cancel)
// is an event on that step's span (`stepEvent`).
import { SpanStatusCode, trace } from '@opentelemetry/api';
import type { Attributes, Span } from '@opentelemetry/api';
import { ContinueAsNew, isCancellation, workflowInfo } from '@temporalio/workflow';

/** The runs of this worker's workflow context that are traced (a context may run several). */
const tracedRuns = new Set<string>();

/** The open step span of each traced run. */
const openSteps = new Map<string, Span>();

export function markRunTraced(runId: string): void {
  tracedRuns.add(runId);
}

export function forgetRun(runId: string): void {
  tracedRuns.delete(runId);
  openSteps.delete(runId);
}

/** An event on the current step's span of a traced run (nothing otherwise). Attributes: no content. */
export function stepEvent(name: string, attributes: Attributes): void {
  if (tracedRuns.size === 0) return;
  openSteps.get(workflowInfo().runId)?.addEvent(name, attributes);
}

/** Runs `fn` inside the span of step `step` when the run is traced; else just runs it. */
export function inStepSpan<T>(step: number, fn: () => Promise<T>): Promise<T> {
  // No traced run in this context (the usual case, and the loop's in-process tests): no lookup.
  if (tracedRuns.size === 0 || !tracedRuns.has(workflowInfo().runId)) return fn();
  return trace
    .getTracer('durable-react-agent')
    .startActiveSpan(`step ${step}`, { attributes: { 'agent.step': step } }, async (span) => {
      const { runId } = workflowInfo();
      openSteps.set(runId, span);
      try {
        return await fn();
      } catch (err) {
        if (isCancellation(err)) span.addEvent('cancel', { 'agent.step': step });
        if (!(err instanceof ContinueAsNew)) span.setStatus({ code: SpanStatusCode.ERROR });
        throw err;
      } finally {
        openSteps.delete(runId);
        span.end();
      }
    });
}
