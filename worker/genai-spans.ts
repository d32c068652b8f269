// The agent's own spans in a traced worker, inside the SDK's RunActivity span of each activity
// (OpenTelemetry's GenAI semantic conventions): `chat <model>` per decision (system, models, tokens,
// cost, finish reasons) and `execute_tool <tool>` per tool call (outcome, idempotency key, and for a
// write its effect outcome), `reconcile <tool>` per lookup by key of a write whose call was cut off.
// The effect outcome is set here, by the activity that observed it, not by the workflow: the
// activity's span has ended by the time the workflow records the effect, and a workflow-side span per
// call would sit in tool-call.ts and change every run's span tree. It is the same pure reading of the
// answer the workflow records (effectFromObservation), so the span and the run's effects agree.
// Prompts, answers, arguments and observations go on them only with content capture on, as the model
// reads them (sensitive fields redacted) and with the worker's secrets masked: a span is exported to
// a third party, so it carries no more than the model was shown and never a key.
import type { ActivityExecuteInput, ActivityInterceptorsFactory } from '@temporalio/worker';
import type { Context as ActivityContext } from '@temporalio/activity';
import type { Span } from '@opentelemetry/api';
import type {
  Observation,
  ToolInput,
  DecideInput,
  DecideOutput,
  ReconcileInput,
  ReconcileOutput,
} from '../common/types';
import { observationForModel } from '../common/model-view/decision-payload';
import { ALL_TOOLS } from '../domains/index';
import { scrubSecrets } from '../activities/secrets';
import { listenForDecisionDetails } from '../runtime/telemetry/decision-details';
import type { Tracing } from '../runtime/telemetry/tracing';
import { effectFromObservation } from '../workflows/agent/effects';
import { DECIDE_ACTIVITY } from './metrics';

/** Attribute names outside the GenAI conventions (which have none for cost, outcome or keys). */
export const AGENT_ATTR = {
  costUsd: 'agent.llm.cost_usd',
  costUnknown: 'agent.llm.cost_unknown',
  toolOutcome: 'agent.tool.outcome',
  idempotencyKey: 'agent.idempotency_key',
  step: 'agent.step',
  /** A write's outcome as its activity saw it: the workflow's states, or `unknown` (the call failed; a lookup by key follows). */
  effectState: 'agent.effect.state',
  effectVia: 'agent.effect.via',
} as const;

const RECONCILE_PREFIX = 'reconcile_';

export interface GenAiSpanOptions {
  /** The model the worker asks for (LlmConfig.model). */
  model: string;
  /** Values never to export (the API key, the codec keys...): masked in any captured content. */
  secrets: readonly string[];
}

/** What each span below needs: the API, the content switch, secret masking and a span around a call. */
interface SpanKit {
  api: Tracing['api'];
  capture: boolean;
  text: (value: unknown) => string;
  inSpan: <T>(name: string, kind: number, run: (span: Span) => Promise<T>) => Promise<T>;
}

type Next = (input: ActivityExecuteInput) => Promise<unknown>;

export function genAiSpans(tracing: Tracing, opts: GenAiSpanOptions): ActivityInterceptorsFactory {
  const { api, settings } = tracing;
  const tracer = api.trace.getTracer('durable-react-agent');
  const text = (value: unknown) =>
    scrubSecrets(typeof value === 'string' ? value : JSON.stringify(value), opts.secrets);
  const kit: SpanKit = {
    api,
    capture: settings.captureContent,
    text,
    inSpan: async (name, kind, run) =>
      tracer.startActiveSpan(name, { kind }, async (span) => {
        try {
          return await run(span);
        } catch (err) {
          span.setStatus({ code: api.SpanStatusCode.ERROR, message: text(err instanceof Error ? err.message : err) });
          throw err;
        } finally {
          span.end();
        }
      }),
  };

  return (ctx) => ({
    inbound: {
      async execute(input, next) {
        const type = ctx.info.activityType;
        const arg = input.args[0];
        if (type === DECIDE_ACTIVITY) return chatSpan(kit, ctx, opts.model, arg as DecideInput, input, next);
        if (type.startsWith(RECONCILE_PREFIX) && isReconcileInput(arg))
          return reconcileSpan(kit, type.slice(RECONCILE_PREFIX.length), arg, input, next);
        if (isToolInput(arg)) return toolSpan(kit, type, arg, input, next);
        return next(input);
      },
    },
  });
}

/** `chat <model>`: one decision. */
function chatSpan(
  { api, capture, text, inSpan }: SpanKit,
  ctx: ActivityContext,
  model: string,
  decide: DecideInput,
  input: ActivityExecuteInput,
  next: Next,
): Promise<unknown> {
  return inSpan(`chat ${model}`, api.SpanKind.CLIENT, async (span) => {
    span.setAttributes({
      'gen_ai.operation.name': 'chat',
      'gen_ai.system': 'openai',
      'gen_ai.request.model': model,
      [AGENT_ATTR.step]: decide.payload.state_summary.steps_completed + 1,
      [AGENT_ATTR.idempotencyKey]: decide.idempotency_key,
    });
    listenForDecisionDetails(ctx, (details) => {
      if (details.finishReasons) span.setAttribute('gen_ai.response.finish_reasons', [...details.finishReasons]);
      if (capture && details.messages) span.setAttribute('gen_ai.input.messages', text(details.messages));
    });
    const output = (await next(input)) as DecideOutput;
    const charged = (output.attempts ?? []).filter((a) => a.outcome === 'ok').at(-1);
    span.setAttributes({
      'gen_ai.response.model': output.model,
      'gen_ai.usage.input_tokens': output.usage.prompt_tokens,
      'gen_ai.usage.output_tokens': output.usage.completion_tokens,
      'gen_ai.usage.cache_read.input_tokens': output.usage.cached_prompt_tokens ?? 0,
      ...(charged ? { [AGENT_ATTR.costUsd]: charged.cost_usd } : {}),
      ...(charged?.unpriced ? { [AGENT_ATTR.costUnknown]: true } : {}),
    });
    if (capture) span.setAttribute('gen_ai.output.messages', text([{ role: 'assistant', content: output.text }]));
    return output;
  });
}

/** `reconcile <tool>`: the lookup by key of a write whose call failed or was cut off, and what it found. */
function reconcileSpan(
  { api, inSpan }: SpanKit,
  tool: string,
  arg: ReconcileInput,
  input: ActivityExecuteInput,
  next: Next,
): Promise<unknown> {
  return inSpan(`reconcile ${tool}`, api.SpanKind.INTERNAL, async (span) => {
    span.setAttributes({
      'gen_ai.tool.name': tool,
      [AGENT_ATTR.idempotencyKey]: arg.idempotency_key,
      [AGENT_ATTR.effectVia]: 'reconcile',
    });
    const found = (await next(input)) as ReconcileOutput;
    span.setAttribute(AGENT_ATTR.effectState, found.state);
    return found;
  });
}

/** `execute_tool <tool>`: one tool call, and a write's effect as its answer says. */
function toolSpan(
  { api, capture, text, inSpan }: SpanKit,
  type: string,
  arg: ToolInput,
  input: ActivityExecuteInput,
  next: Next,
): Promise<unknown> {
  const spec = ALL_TOOLS[type];
  const effectful = spec?.effectful === true;
  return inSpan(`execute_tool ${type}`, api.SpanKind.INTERNAL, async (span) => {
    span.setAttributes({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': type,
      [AGENT_ATTR.idempotencyKey]: arg.idempotency_key,
    });
    if (capture) span.setAttribute('gen_ai.tool.call.arguments', text(arg.args));
    try {
      const observation = (await next(input)) as Observation;
      span.setAttribute(AGENT_ATTR.toolOutcome, observation.ok ? 'ok' : 'error');
      if (effectful) {
        const call = { tool: type, idempotency_key: arg.idempotency_key, step: 0, args: arg.args };
        const { state } = effectFromObservation(call, observation, spec.outcomeByOk);
        span.setAttributes({ [AGENT_ATTR.effectState]: state, [AGENT_ATTR.effectVia]: 'tool' });
      }
      if (capture) span.setAttribute('gen_ai.tool.call.result', text(observationForModel(observation, ALL_TOOLS)));
      return observation;
    } catch (err) {
      span.setAttribute(AGENT_ATTR.toolOutcome, 'failed');
      // Not known from here: the workflow looks the key up next (the `reconcile <tool>` span).
      if (effectful) span.setAttribute(AGENT_ATTR.effectState, 'unknown');
      throw err;
    }
  });
}

function isReconcileInput(arg: unknown): arg is ReconcileInput {
  const input = arg as Partial<ReconcileInput> | undefined;
  return typeof input === 'object' && input !== null && typeof input.idempotency_key === 'string';
}

function isToolInput(arg: unknown): arg is ToolInput {
  const input = arg as Partial<ToolInput> | undefined;
  return (
    typeof input === 'object' &&
    input !== null &&
    typeof input.idempotency_key === 'string' &&
    typeof input.args === 'object' &&
    input.args !== null
  );
}
