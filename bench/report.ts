// The bench's report: the table (printed, and in bench.md), the conditions line, the markdown file.
import type { CliStartResult } from './cli-start';
import type { WorkerStartResult } from './worker-start';
import { PAYLOAD_TURNS } from './payload-size';
import type { PayloadSize } from './payload-size';
import { bytes, markdownTable, median, ms, secs, signed } from './stats';
import type { CrashMode, Options } from './options';
import type { OverheadLevel } from './phases/overhead';
import type { FloorLevel } from './phases/floor';
import type { ThroughputTrial } from './phases/throughput';
import type { HistoryReport } from './phases/history';
import type { CancelReport } from './phases/cancel';
import type { CrashModeReport, CrashReport } from './phases/crash';
import type { LimiterTrial } from './phases/limiter';

export interface Report {
  label: string | undefined;
  startedAt: string;
  durationS: number;
  conditions: Record<string, unknown>;
  options: Options;
  overhead?: OverheadLevel[];
  floor?: FloorLevel[];
  throughput?: ThroughputTrial[];
  history?: HistoryReport;
  historyWithCodec?: string;
  payload?: PayloadSize[];
  cancel?: CancelReport;
  crash?: CrashReport;
  cli?: CliStartResult;
  limiter?: LimiterTrial[];
  workerStart?: WorkerStartResult;
}

export const HEADER = ['Measure', 'Setting', 'Result', 'Median', 'p95', 'Target', 'Met'];

function yesNo(cond: boolean | undefined): string {
  return cond === undefined ? '—' : cond ? 'yes' : 'NO';
}

/** The table: a row per measure, in the order the phases run. */
export function rows(r: Report): string[][] {
  return [
    ...overheadRows(r),
    ...floorRows(r),
    ...startRows(r),
    ...throughputRows(r),
    ...payloadRows(r),
    ...historyRows(r),
    ...cancelRows(r),
    ...limiterRows(r),
    ...crashRows(r),
  ];
}

/** Rows: the per-step overhead, a row per LLM latency. */
function overheadRows(r: Report): string[][] {
  const out: string[][] = [];
  for (const l of r.overhead ?? []) {
    const target = l.latencyMs === 0 ? '≤ 15 ms/step' : l.latencyMs === 500 ? '≤ 3 %' : '—';
    const met =
      l.latencyMs === 0 ? l.overheadPerStepMs.median <= 15 : l.latencyMs === 500 ? l.overheadPct <= 3 : undefined;
    out.push([
      `overhead per step`,
      `LLM ${l.latencyMs} ms, ${l.steps}-step run, n=${l.overheadPerStepMs.n}${l.failed ? `, ${l.failed} failed` : ''}`,
      `durable ${ms(l.durableMs.median)} vs in-process ${ms(l.inProcessMs.median)} per run (×${l.ratio.toFixed(2)}, ${signed(l.overheadPct, (v) => `${v.toFixed(1)} %`)}); ` +
        `CPU/step: worker ${ms(l.cpuPerStepMs.worker)} + server ${ms(l.cpuPerStepMs.server)} vs in-process ${ms(l.cpuPerStepMs.inProcess)}` +
        (l.eagerShare !== undefined ? `; ${(l.eagerShare * 100).toFixed(0)} % of activities dispatched eagerly` : ''),
      `${signed(l.overheadPerStepMs.median, ms)}/step`,
      `${signed(l.overheadPerStepMs.p95, ms)}/step`,
      target,
      yesNo(met),
    ]);
  }
  return out;
}

/** Rows: the agent's step against a bare workflow running the same activities, a row per LLM latency. */
function floorRows(r: Report): string[][] {
  const before = (r.floor ?? []).flatMap((l) =>
    l.before
      ? [
          [
            'agent step / Temporal floor, before',
            `LLM ${l.latencyMs} ms, the agent of ${l.before.dist}`,
            `before ${ms(l.before.perStepMs.median)}/step vs bare workflow ${ms(l.floorPerStepMs.median)}/step; ` +
              `CPU/step: worker ${ms(l.before.cpuPerStepMs)}; events/run ${l.before.events}`,
            `×${l.before.ratio.toFixed(2)}`,
            `${ms(l.before.perStepMs.p95)}`,
            '—',
            '—',
          ],
        ]
      : [],
  );
  return [...floorNow(r), ...before];
}

function floorNow(r: Report): string[][] {
  return (r.floor ?? []).map((l) => [
    'agent step / Temporal floor',
    `LLM ${l.latencyMs} ms, ${l.steps}-step run, n=${l.agentPerStepMs.n}${l.failed ? `, ${l.failed} failed` : ''}`,
    `agent ${ms(l.agentPerStepMs.median)}/step vs bare workflow ${ms(l.floorPerStepMs.median)}/step; ` +
      `CPU/step: agent worker ${ms(l.cpuPerStepMs.agent)}, floor worker ${ms(l.cpuPerStepMs.floor)}; events/run ${l.events.agent} vs ${l.events.floor}`,
    `×${l.ratio.toFixed(2)}`,
    `${ms(l.agentPerStepMs.p95)} vs ${ms(l.floorPerStepMs.p95)}`,
    l.latencyMs === 0 ? '≤ 0.6×' : '—',
    yesNo(l.latencyMs === 0 ? l.ratio <= 0.6 : undefined),
  ]);
}

/** Rows: cold starts: the CLI and the worker. */
function startRows(r: Report): string[][] {
  const out: string[][] = [];
  if (r.cli) {
    out.push([
      'CLI cold start',
      `agent ${r.cli.args.join(' ')}, n=${r.cli.summary.n} new processes`,
      'spawn to exit, against the bench server',
      ms(r.cli.medianMs),
      ms(r.cli.summary.p95),
      '—',
      yesNo(undefined),
    ]);
  }
  if (r.workerStart) {
    const w = r.workerStart;
    out.push([
      'worker cold start',
      `\`node dist/worker/main.js\` (npm start), n=${w.summary.n} new processes, ${w.prebuilt ? 'prebuilt workflow bundle' : 'NOT the prebuilt bundle'}`,
      `spawn to its first poll (its identity among the task queue's pollers); min ${ms(w.summary.min)}, max ${ms(w.summary.max)}; ` +
        `CPU used by then ${ms(w.cpuMs.median)} median`,
      ms(w.medianMs),
      ms(w.summary.p95),
      '≤ 2 s median',
      yesNo(w.medianMs <= 2000 && w.prebuilt),
    ]);
  }
  return out;
}

/** Rows: throughput, a row per concurrency (medians over its trials). */
function throughputRows(r: Report): string[][] {
  const out: string[][] = [];
  const o = r.options;
  const byC = new Map<number, ThroughputTrial[]>();
  for (const t of r.throughput ?? []) byC.set(t.concurrency, [...(byC.get(t.concurrency) ?? []), t]);
  for (const [c, ts] of byC) {
    const failed = ts.reduce((n, t) => n + t.failed, 0);
    const rss = Math.max(...ts.map((t) => t.workerPeakRssBytes));
    const target = c === 500 ? '0 failed, RSS < 1.5 GiB' : '0 failed';
    const met = c === 500 ? failed === 0 && rss < 1.5 * 1024 ** 3 : failed === 0;
    out.push([
      `throughput`,
      `C=${c} concurrent ${o.steps}-step runs, LLM ${ts[0]!.latencyMs} ms, ${ts.length} trial(s)`,
      `${median(ts.map((t) => t.runsPerSec)).toFixed(1)} runs/s, ${median(ts.map((t) => t.stepsPerSec)).toFixed(0)} steps/s; ` +
        `worker CPU ${median(ts.map((t) => t.workerCpuPct)).toFixed(0)} % (${ms(median(ts.map((t) => t.cpuPerStepMs.worker)))}/step), peak RSS ${bytes(rss)}; ` +
        `server CPU ${median(ts.map((t) => t.serverCpuPct)).toFixed(0)} % (${ms(median(ts.map((t) => t.cpuPerStepMs.server)))}/step); ` +
        (ts[0]!.dbCommitsPerStep !== undefined
          ? `PostgreSQL ${median(ts.map((t) => t.dbCommitsPerStep ?? 0)).toFixed(1)} commits/step; `
          : '') +
        `${failed} failed, ${ts.reduce((n, t) => n + t.wftTimeouts, 0)} workflow task timeouts, ${ts.reduce((n, t) => n + t.activityRetries, 0)} activity retries`,
      `run ${ms(median(ts.map((t) => t.runMs.median)))}`,
      `run ${ms(Math.max(...ts.map((t) => t.runMs.p95)))}`,
      target,
      yesNo(met),
    ]);
  }
  return out;
}

/** Rows: the decide input's size as the conversation grows. */
function payloadRows(r: Report): string[][] {
  const out: string[][] = [];
  for (const p of r.payload ?? []) {
    const base = r.payload!.find((q) => q.domain === p.domain && q.turns === PAYLOAD_TURNS[0])!;
    const growth = p.recordedChars / base.recordedChars;
    out.push([
      'decide input recorded',
      `${p.domain}: ${p.tools} tools, a conversation of ${p.turns} turns`,
      `${p.recordedChars} chars recorded; the model's prompt ${p.promptChars} chars (tools described by the activity)`,
      `×${growth.toFixed(2)} of ${PAYLOAD_TURNS[0]} turns`,
      '—',
      'flat in turns; names only for tools',
      yesNo(growth <= 1.5),
    ]);
  }
  return out;
}

/** Rows: history growth per step and per run of the chain. */
function historyRows(r: Report): string[][] {
  const out: string[][] = [];
  if (r.history) {
    const h = r.history;
    const at = h.at
      .map((a) => `step ${a.step}: ${a.events} events, ${bytes(a.bytes)} (decide input ${bytes(a.decideInputBytes)})`)
      .join('; ');
    out.push([
      'history per step',
      `one ${h.steps}-step run, continue_as_new_every ${h.continueAsNewEvery}, no codec`,
      at,
      `mean ${bytes(h.meanStepBytes)}/step`,
      '—',
      `step ${h.at[h.at.length - 1]?.step} ≤ 1.5× step ${h.at[0]?.step}`,
      yesNo(Number.isFinite(h.growth) ? h.growth <= 1.5 : undefined) +
        (Number.isFinite(h.growth) ? ` (×${h.growth.toFixed(2)})` : ''),
    ]);
    for (const run of h.runs) {
      const n = run.lastStep - run.firstStep + 1;
      out.push([
        'history per run',
        `steps ${run.firstStep}-${run.lastStep} (ends: ${run.closeType})`,
        `${run.events} events, ${bytes(run.bytes)} (server: ${run.serverBytes !== undefined ? bytes(run.serverBytes) : 'n/a'}); start event ${bytes(run.startEventBytes)}, close event ${bytes(run.closeEventBytes)}`,
        `${bytes(run.bytes / n)}/step`,
        '—',
        '—',
        '—',
      ]);
    }
    out.push(['history per step, with codec', '—', r.historyWithCodec ?? 'n/a', 'n/a', 'n/a', '—', '—']);
  }
  return out;
}

/** Rows: cancel latency through the client API and the CLI. */
function cancelRows(r: Report): string[][] {
  const out: string[][] = [];
  if (r.cancel) {
    const c = r.cancel;
    out.push([
      'cancel → LLM request aborted',
      `client API (requestCancelWorkflowExecution), n=${c.api.abortMs.n}${c.api.failed ? `, ${c.api.failed} failed` : ''}`,
      `min ${ms(c.api.abortMs.min)}, max ${ms(c.api.abortMs.max)}`,
      ms(c.api.abortMs.median),
      ms(c.api.abortMs.p95),
      '≤ 1 s median',
      yesNo(c.api.abortMs.median <= 1000 && c.api.failed === 0),
    ]);
    out.push([
      'cancel → run closed',
      `client API, n=${c.api.closedMs.n}`,
      `max ${ms(c.api.closedMs.max)}`,
      ms(c.api.closedMs.median),
      ms(c.api.closedMs.p95),
      '—',
      '—',
    ]);
    if (c.cli) {
      out.push([
        'cancel → LLM request aborted',
        `\`agent cancel\` CLI (a new node process), n=${c.cli.abortMs.n}${c.cli.failed ? `, ${c.cli.failed} failed` : ''}`,
        `${c.cli.requestedMs ? `recorded ${ms(c.cli.requestedMs.median)}, ` : ''}run closed ${ms(c.cli.closedMs.median)} median`,
        ms(c.cli.abortMs.median),
        ms(c.cli.abortMs.p95),
        '≤ 1 s median',
        yesNo(c.cli.abortMs.median <= 1000 && c.cli.failed === 0),
      ]);
    }
  }
  return out;
}

/** Rows: the 429 storm, with and without the limiter. */
function limiterRows(r: Report): string[][] {
  const out: string[][] = [];
  for (const t of r.limiter ?? []) {
    out.push([
      'LLM rate limit (429 storm)',
      `${t.runs} concurrent runs × ${t.steps} decisions, provider ${t.tpm} TPM with 429 + Retry-After, ${t.limiter ? `limiter at ${t.tpm} TPM` : 'no limiter'}`,
      `${t.succeeded} succeeded, ${t.llmError} llm_error, ${t.llmTimeout} llm_timeout, ${t.otherEnd} other; provider saw max ${t.maxTpmSeen} TPM, refused ${t.refused429}; wall ${secs(t.wallMs)}`,
      `run ${secs(t.runMs.median)}`,
      `run ${secs(t.runMs.p95)}`,
      t.limiter ? `0 llm_*, ≤ ${t.tpm} TPM` : '—',
      t.limiter ? yesNo(t.llmError + t.llmTimeout === 0 && t.maxTpmSeen <= t.tpm) : '—',
    ]);
  }
  return out;
}

/** Rows: crash recovery, a row per mode. */
function crashRows(r: Report): string[][] {
  const out: string[][] = [];
  for (const [mode, c] of Object.entries(r.crash?.modes ?? {}) as Array<[CrashMode, CrashModeReport]>) {
    const restart = mode === 'restart';
    out.push([
      'crash recovery',
      `SIGKILL mid-decide, ${restart ? 'new worker started after the kill' : 'second worker already running'}, n=${c.recoveryMs.n}${c.failed ? `, ${c.failed} failed` : ''}`,
      (restart
        ? `kill→ready ${secs(c.killToReadyMs.median)}; ready→retry ${secs(c.readyToRetryMs.median)}`
        : `kill→retry ${secs(c.readyToRetryMs.median)}`) +
        `; re-run→next step ${secs(c.rerunToNextStepMs.median)}; kill→next step ${secs(c.totalMs.median)}; ${c.stickyTimeouts} sticky timeouts`,
      secs(c.recoveryMs.median),
      secs(c.recoveryMs.p95),
      restart ? '≤ 5 s after ready + re-run' : '—',
      restart ? yesNo(c.recoveryMs.median <= 5000 && c.failed === 0) : '—',
    ]);
    if (restart) {
      out.push([
        'crash recovery, fresh worker',
        `SIGKILL mid-decide, then a new worker process started, n=${c.totalMs.n}`,
        `kill → new worker polling (${secs(c.killToReadyMs.median)}) → interrupted step re-run and completed → next step asked; everything included`,
        secs(c.totalMs.median),
        secs(c.totalMs.p95),
        '—',
        '—',
      ]);
    }
  }
  return out;
}

export function conditionsLine(r: Report): string {
  const c = r.conditions as Record<string, string | number>;
  return (
    `${r.startedAt}, ${r.durationS.toFixed(0)} s, mode ${r.options.mode}${r.label ? `, label ${r.label}` : ''}` +
    `${c.commit ? `, commit ${c.commit}` : ''}; ` +
    `${c.cpus} CPU(s) ${c.cpuModel}, ${c.memGiB} GiB; load avg ${c.loadStart} at start, ${c.loadEnd} at end; ` +
    `node ${c.node}, ${c.temporal}; worker metrics ${r.options.metrics ? 'on' : 'off'}, search attribute upserts ${r.options.searchAttributes ? 'on' : 'off'}; ` +
    `worker overrides ${JSON.stringify(r.options.workerOverrides)}; ` +
    `server extras ${JSON.stringify([...r.options.dynamicConfig, ...r.options.sqlitePragmas, ...r.options.serverArgs, ...(r.options.postgresSettings ?? [])])}` +
    (r.options.deployDir ? `, deploy dir ${r.options.deployDir}` : '')
  );
}

export function markdown(r: Report): string {
  const parts = [
    `# Benchmark results${r.label ? ` (${r.label})` : ''}`,
    '',
    `Conditions: ${conditionsLine(r)}.`,
    '',
    'Medians and p95 (nearest rank: with fewer than 20 samples, p95 is the maximum) over the trials. See docs/benchmark.md for the method.',
    '',
    markdownTable(HEADER, rows(r)),
  ];
  if (r.overhead?.length) {
    parts.push(
      '',
      "Where a durable step's time goes (server timestamps from the run's history, per step, median run):",
      '',
      markdownTable(
        [
          'LLM latency',
          'run (server) /step',
          'activity queue /step',
          'decide /step',
          'tool /step',
          'workflow task queue /step',
          'workflow task run /step',
          'events /step',
        ],
        r.overhead.map((l) => [
          `${l.latencyMs} ms`,
          ms(l.breakdownPerStepMs.serverMs),
          ms(l.breakdownPerStepMs.activityQueueMs),
          ms(l.breakdownPerStepMs.decideMs),
          ms(l.breakdownPerStepMs.toolMs),
          ms(l.breakdownPerStepMs.wftQueueMs),
          ms(l.breakdownPerStepMs.wftRunMs),
          l.breakdownPerStepMs.events.toFixed(1),
        ]),
      ),
    );
  }
  return parts.join('\n') + '\n';
}
