// Phase `limiter`: a 429 storm from a provider with a tokens-per-minute limit, with and without the fleet-wide limiter.
import fs from 'node:fs';
import path from 'node:path';
import { ScriptedLlmServer } from '../../offline-model/scripted-llm-server';
import { envFor, newId, runInput, startWorker } from '../context';
import type { Ctx } from '../context';
import { ok, startAll } from '../durable-run';
import type { DurableRun } from '../durable-run';
import { progress } from '../process';
import { scenarioScript } from '../scenario';
import { secs, summarize } from '../stats';
import type { Summary } from '../stats';

export interface LimiterTrial {
  limiter: boolean;
  runs: number;
  steps: number;
  tpm: number;
  wallMs: number;
  succeeded: number;
  llmError: number;
  llmTimeout: number;
  otherEnd: number;
  /** The most tokens the provider answered within one minute. */
  maxTpmSeen: number;
  refused429: number;
  runMs: Summary;
  /** How the runs ended: stop reason, or `error: ...` when the result could not be read. */
  ends: Record<string, number>;
  errors: string[];
}

/**
 * N concurrent runs against a provider that answers 429 (with Retry-After) above its tokens per
 * minute: once with every worker calling it freely, once through the limiter set to the same TPM.
 */
export async function phaseLimiter(ctx: Ctx): Promise<LimiterTrial[]> {
  const { opts } = ctx;
  const out: LimiterTrial[] = [];
  // With the limiter first: the storm without it leaves a loaded server behind.
  for (const limiter of [true, false]) {
    const what = limiter ? 'with limiter' : 'without limiter';
    const provider = await ScriptedLlmServer.start({
      tokensPerMinute: opts.limiterTpm,
      defaultScript: scenarioScript({ steps: opts.limiterSteps, delayMs: 0 }),
    });
    const tq = newId(`limiter-${limiter ? 'on' : 'off'}-tq`);
    // A model of its own (its own limiter); a worker refuses a model it cannot price (docs/cost.md).
    const model = `bench-model-${tq}`;
    const pricesFile = path.join(ctx.logDir, `prices-${tq}.json`);
    fs.writeFileSync(pricesFile, JSON.stringify({ [model]: { input_usd_per_mtok: 0.4, output_usd_per_mtok: 1.6 } }));
    const worker = startWorker(ctx, tq, `limiter-${limiter ? 'on' : 'off'}`, {
      OPENAI_BASE_URL: provider.baseUrl,
      OPENAI_MODEL: model,
      AGENT_PRICES_FILE: pricesFile,
      ...(limiter ? { AGENT_LLM_TPM: String(opts.limiterTpm) } : {}),
    });
    try {
      await worker.readyAt;
      const env = envFor(ctx, tq);
      const ids = Array.from({ length: opts.limiterRuns }, () => newId(`limiter-${limiter ? 'on' : 'off'}`));
      progress(
        `limiter: ${ids.length} runs of ${opts.limiterSteps} decisions, provider ${opts.limiterTpm} TPM, ${what}`,
      );
      const start = performance.now();
      let done = 0;
      const ticker = setInterval(() => {
        const s = provider.rateLimitStats();
        progress(
          `limiter (${what}): ${done}/${ids.length} runs done; provider answered ${s.answered}, refused ${s.refused}`,
        );
      }, 10_000);
      let runs: DurableRun[];
      try {
        runs = await startAll(ctx, env, ids, runInput(ctx, opts.limiterSteps), () => done++);
      } finally {
        clearInterval(ticker);
      }
      const stats = provider.rateLimitStats();
      const ended = (reason: string) => runs.filter((r) => r.result?.stop_reason === reason).length;
      const t: LimiterTrial = {
        limiter,
        runs: runs.length,
        steps: opts.limiterSteps,
        tpm: opts.limiterTpm,
        wallMs: performance.now() - start,
        succeeded: runs.filter((r) => ok(r, opts.limiterSteps)).length,
        llmError: ended('llm_error'),
        llmTimeout: ended('llm_timeout'),
        otherEnd: 0,
        maxTpmSeen: stats.maxTokensPerMinute,
        refused429: stats.refused,
        runMs: summarize(runs.map((r) => r.ms)),
        ends: {},
        errors: [
          ...new Set(
            runs.filter((r) => !ok(r, opts.limiterSteps)).map((r) => r.error ?? `stop_reason ${r.result?.stop_reason}`),
          ),
        ].slice(0, 5),
      };
      t.otherEnd = t.runs - t.succeeded - t.llmError - t.llmTimeout;
      for (const r of runs) {
        const end = r.result?.stop_reason ?? `error: ${(r.error ?? '').slice(0, 80)}`;
        t.ends[end] = (t.ends[end] ?? 0) + 1;
      }
      out.push(t);
      progress(
        `limiter (${what}): ${t.succeeded}/${t.runs} succeeded, ${t.llmError} llm_error, ${t.llmTimeout} llm_timeout, ${t.otherEnd} other; ` +
          `provider max ${t.maxTpmSeen} TPM (limit ${t.tpm}), ${t.refused429} refused with 429; run ${secs(t.runMs.median)} median / ${secs(t.runMs.p95)} p95; ends ${JSON.stringify(t.ends)}`,
      );
    } finally {
      await worker.stop();
      await provider.close();
    }
  }
  return out;
}
