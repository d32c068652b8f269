// The agent's own spans in a traced worker, inside the SDK's RunActivity span of each activity
// (OpenTelemetry's GenAI semantic conventions): `chat <model>` per decision (system, models, tokens,
// cost, finish reasons) and `execute_tool <tool>` per tool call (outcome, idempotency key).
// Prompts, answers, arguments and observations go on them only with content capture on, as the model
// reads them (sensitive fields redacted) and with the worker's secrets masked: a span is exported to
// a third party, so it carries no more than the model was shown and never a key.
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import type { Span } from '@opentelemetry/api';
import type { Observation, ToolInput, DecideInput, DecideOutput } from '../common/types';
import { observationForModel } from '../common/model-view/decision-payload';
import { ALL_TOOLS } from '../domains/index';
import { scrubSecrets } from '../activities/secrets';
import { listenForDecisionDetails } from '../runtime/telemetry/decision-details';
import type { Tracing } from '../runtime/telemetry/tracing';
import { DECIDE_ACTIVITY } from './metrics';

/** Attribute names outside the GenAI conventions (which have none for cost, outcome or keys). */
export const AGENT_ATTR = {
  costUsd: 'agent.llm.cost_usd',
  costUnknown: 'agent.llm.cost_unknown',
  toolOutcome: 'agent.tool.outcome',
  idempotencyKey: 'agent.idempotency_key',
  step: 'agent.step',
} as const;

export interface GenAiSpanOptions {
  /** The model the worker asks for (LlmConfig.model). */
  model: string;
  /** Values never to export (the API key, the codec keys...): masked in any captured content. */
  secrets: readonly string[];
}

export function genAiSpans(tracing: Tracing, opts: GenAiSpanOptions): ActivityInterceptorsFactory {
  const { api, settings } = tracing;
  const tracer = api.trace.getTracer('durable-react-agent');
  const capture = settings.captureContent;
  const text = (value: unknown) =>
    scrubSecrets(typeof value === 'string' ? value : JSON.stringify(value), opts.secrets);

  const inSpan = async <T>(name: string, kind: number, run: (span: Span) => Promise<T>): Promise<T> =>
    tracer.startActiveSpan(name, { kind }, async (span) => {
      try {
        return await run(span);
      } catch (err) {
        span.setStatus({ code: api.SpanStatusCode.ERROR, message: text(err instanceof Error ? err.message : err) });
        throw err;
      } finally {
        span.end();
      }
    });

  return (ctx) => ({
    inbound: {
      async execute(input, next) {
        const type = ctx.info.activityType;
        const arg = input.args[0];
        if (type === DECIDE_ACTIVITY) {
          const decide = arg as DecideInput;
          return inSpan(`chat ${opts.model}`, api.SpanKind.CLIENT, async (span) => {
            span.setAttributes({
              'gen_ai.operation.name': 'chat',
              'gen_ai.system': 'openai',
              'gen_ai.request.model': opts.model,
              [AGENT_ATTR.step]: decide.payload.state_summary.steps_completed + 1,
              [AGENT_ATTR.idempotencyKey]: decide.idempotency_key,
            });
            listenForDecisionDetails(ctx, (details) => {
              if (details.finishReasons)
                span.setAttribute('gen_ai.response.finish_reasons', [...details.finishReasons]);
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
            if (capture)
              span.setAttribute('gen_ai.output.messages', text([{ role: 'assistant', content: output.text }]));
            return output;
          });
        }
        if (!isToolInput(arg)) return next(input);
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
            if (capture)
              span.setAttribute('gen_ai.tool.call.result', text(observationForModel(observation, ALL_TOOLS)));
            return observation;
          } catch (err) {
            span.setAttribute(AGENT_ATTR.toolOutcome, 'failed');
            throw err;
          }
        });
      },
    },
  });
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
