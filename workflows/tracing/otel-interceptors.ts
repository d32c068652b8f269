// The workflow side of OpenTelemetry tracing (the SDK's @temporalio/interceptors-opentelemetry),
// compiled into every workflow bundle (scripts/bundle-workflows.ts) but active only in a run whose
// start carried a trace context: a client with tracing on (the CLI with an OTLP endpoint) put it in
// the start's headers, which the history keeps. So whether a run is traced is decided by its own
// history, the same on every replay, and a run started without one (every run recorded before this
// code, every run of a CLI without tracing) executes exactly as it did: no wrapper, no extra yield.
// The SDK's interceptors await inside update and signal handlers, which reorders the commands of a
// handler that completes at once: the limiter (workflows/limiter) is never wrapped for that reason.
import type {
  ActivityInput,
  ContinueAsNewInput,
  LocalActivityInput,
  Next,
  QueryInput,
  SignalInput,
  SignalWorkflowInput,
  StartChildWorkflowExecutionInput,
  UpdateInput,
  WorkflowExecuteInput,
  WorkflowInboundCallsInterceptor,
  WorkflowInterceptors,
  WorkflowOutboundCallsInterceptor,
} from '@temporalio/workflow';
import { workflowInfo } from '@temporalio/workflow';
import { defaultPayloadConverter } from '@temporalio/common';
import type { Headers } from '@temporalio/common';
import type * as OtelWorkflow from '@temporalio/interceptors-opentelemetry/lib/workflow';
import type {
  OpenTelemetryInboundInterceptor,
  OpenTelemetryOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry/lib/workflow';
import { LIMITER_WORKFLOW_TYPE } from '../../common/limiter/llm-limiter';
import { forgetRun, markRunTraced } from './step-span';

/** The header the SDK's client interceptor writes the caller's span context into. */
export const TRACE_HEADER = '_tracer-data';

/**
 * The SDK's workflow interceptors and the OpenTelemetry SDK under them, loaded by a traced run only:
 * a workflow's modules are evaluated again for every run a worker starts or replays, and these were
 * a sixth of that for runs that never trace (docs/benchmark.md, the per-step cost).
 */
function otelWorkflow(): typeof OtelWorkflow {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded by a traced run only
  return require('@temporalio/interceptors-opentelemetry/lib/workflow') as typeof OtelWorkflow;
}

/** One run's tracing: off until its start is seen to carry a trace context. */
interface RunTracing {
  inbound?: OpenTelemetryInboundInterceptor;
  outbound?: OpenTelemetryOutboundInterceptor;
}

/** The workflow interceptors the SDK calls once per run (workflowInterceptorModules). */
export const interceptors = (): WorkflowInterceptors => {
  const { workflowType, runId } = workflowInfo();
  if (workflowType === LIMITER_WORKFLOW_TYPE) return {};
  const run: RunTracing = {};
  return {
    inbound: [tracedInbound(run, runId)],
    outbound: [tracedOutbound(run)],
    internals: [
      {
        // The SDK's dispose is async but only disables the run's context manager before calling next.
        dispose: (input, next) => {
          forgetRun(runId);
          if (run.inbound) void new (otelWorkflow().OpenTelemetryInternalsInterceptor)().dispose(input, next);
          else next(input);
        },
      },
    ],
  };
};

/**
 * The input with its trace header only if the header is what the SDK's interceptors can read (a JSON
 * object of strings): any caller may put anything there, and the SDK's interceptors throw on what
 * they cannot decode, which would fail the workflow task of every later attempt and wedge the run.
 * An unreadable header is dropped: the call is handled, untraced (a start with one: the run is not traced).
 */
export function withReadableTraceHeader<T extends { headers: Headers }>(input: T): T {
  const header = input.headers[TRACE_HEADER];
  if (header === undefined || isCarrier(header)) return input;
  const headers = { ...input.headers };
  delete headers[TRACE_HEADER];
  return { ...input, headers };
}

function isCarrier(header: Headers[string]): boolean {
  try {
    const value: unknown = defaultPayloadConverter.fromPayload(header);
    return (
      typeof value === 'object' &&
      value !== null &&
      !Array.isArray(value) &&
      Object.values(value).every((v) => typeof v === 'string')
    );
  } catch {
    return false;
  }
}

function tracedInbound(run: RunTracing, runId: string): WorkflowInboundCallsInterceptor {
  return {
    execute(given: WorkflowExecuteInput, next: Next<WorkflowInboundCallsInterceptor, 'execute'>) {
      const input = withReadableTraceHeader(given);
      if (input.headers[TRACE_HEADER] === undefined) return next(input);
      // Built only now: the SDK's tracer provider is created by the first interceptor constructed.
      const otel = otelWorkflow();
      run.inbound = new otel.OpenTelemetryInboundInterceptor();
      run.outbound = new otel.OpenTelemetryOutboundInterceptor();
      markRunTraced(runId);
      return run.inbound.execute(input, next);
    },
    handleSignal: (input: SignalInput, next: Next<WorkflowInboundCallsInterceptor, 'handleSignal'>) =>
      run.inbound ? run.inbound.handleSignal(withReadableTraceHeader(input), next) : next(input),
    handleUpdate: (input: UpdateInput, next: Next<WorkflowInboundCallsInterceptor, 'handleUpdate'>) =>
      run.inbound ? run.inbound.handleUpdate(withReadableTraceHeader(input), next) : next(input),
    validateUpdate: (input: UpdateInput, next: Next<WorkflowInboundCallsInterceptor, 'validateUpdate'>) =>
      run.inbound ? run.inbound.validateUpdate(withReadableTraceHeader(input), next) : next(input),
    handleQuery: (input: QueryInput, next: Next<WorkflowInboundCallsInterceptor, 'handleQuery'>) =>
      run.inbound ? run.inbound.handleQuery(withReadableTraceHeader(input), next) : next(input),
  };
}

function tracedOutbound(run: RunTracing): WorkflowOutboundCallsInterceptor {
  return {
    scheduleActivity: (input: ActivityInput, next: Next<WorkflowOutboundCallsInterceptor, 'scheduleActivity'>) =>
      run.outbound ? run.outbound.scheduleActivity(input, next) : next(input),
    scheduleLocalActivity: (
      input: LocalActivityInput,
      next: Next<WorkflowOutboundCallsInterceptor, 'scheduleLocalActivity'>,
    ) => (run.outbound ? run.outbound.scheduleLocalActivity(input, next) : next(input)),
    startChildWorkflowExecution: (
      input: StartChildWorkflowExecutionInput,
      next: Next<WorkflowOutboundCallsInterceptor, 'startChildWorkflowExecution'>,
    ) => (run.outbound ? run.outbound.startChildWorkflowExecution(input, next) : next(input)),
    continueAsNew: (input: ContinueAsNewInput, next: Next<WorkflowOutboundCallsInterceptor, 'continueAsNew'>) =>
      run.outbound ? run.outbound.continueAsNew(input, next) : next(input),
    signalWorkflow: (input: SignalWorkflowInput, next: Next<WorkflowOutboundCallsInterceptor, 'signalWorkflow'>) =>
      run.outbound ? run.outbound.signalWorkflow(input, next) : next(input),
  };
}
