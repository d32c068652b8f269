// One trial of one scenario, end to end: its world written, its model scripted (or live), the run
// started, a person answering what it waits for (as the scenario's operator says), perhaps a
// cancel (chaos), then its history fetched and checked. Every call to the server is retried, so a
// server restart in the middle is survived by the harness as well as by the run.
import { WorkflowExecutionAlreadyStartedError, WorkflowFailedError } from '@temporalio/client';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { cancelRun, runResult, startRun } from '../client/agent-client';
import { answerApproval } from '../client/approvals';
import { traceOf } from '../client/history/trace';
import { readRunHistory } from '../client/history/read-history';
import type { StepCost, StepEvent } from '../client/history/trace';
import { fetchRunChain, payloadDecoder } from '../client/history/fetch-chain';
import { DOMAINS, registryOfDomain } from '../domains/index';
import type { AgentInput } from '../common/types';
import type { TemporalEnv } from '../runtime/temporal-env';
import type { ScriptedLlmServer, Reply } from '../offline-model/scripted-llm-server';
import { byStep, escalate, final, malformed, tool } from '../offline-model/scripted-replies';
import type { reactAgent } from '../workflows/agent/agent';
import { checkRun } from './checks';
import type { ScoredRun } from './metrics';
import { answerOf, runRecordOf } from './run-record';
import type { Scenario, ScriptedReply } from './scenario';
import { readRefundRows, writeRunWorld } from './world-files';
import { delay, retry } from './harness/retry';
import { transcriptOf } from './harness/transcript';
import type { TranscriptEntry } from './harness/transcript';
import { secretsFromEnv } from '../activities/secrets';
import { stateQuery } from '../common/agent-messages';

/** The scenarios run the support domain: its tools. */
const SUPPORT_TOOLS = registryOfDomain(DOMAINS.support!);

export interface RunContext {
  client: Client;
  env: TemporalEnv;
  /** The scripted model (offline); undefined with --live. */
  llm?: ScriptedLlmServer;
  worldDir: string;
}

export interface TrialPlan {
  scenario: Scenario;
  trial: number;
  workflowId: string;
  /**
   * Chaos: cancel the run once it is at this step. Offline, the model's answer for that step is
   * held back 3 s (a slow LLM call), so the cancel lands in the middle of the step.
   */
  cancelAtStep?: number;
  /** Told when the cancel is sent (the chaos log). */
  onCancel?: () => void;
}

/** How long the scripted model holds back the answer of the step a chaos cancel targets. */
const SLOW_STEP_MS = 3000;

/** How long the harness keeps asking for a run's result through server restarts. */
const RESULT_PATIENCE_MS = 600_000;

export interface TrialResult extends ScoredRun {
  workflowId: string;
  /** The bounded trace rebuilt from the history (agent trace's events), for the report. */
  events: StepEvent[];
  /** What each step's LLM attempts cost, from the history (a cancelled run has no result's usage). */
  stepCosts: StepCost[];
  stopReason?: string;
  answer?: string;
  /** The whole run: the task, every call and result, a person's answers, the final answer (redacted as for the model). */
  transcript: TranscriptEntry[];
  /** A harness problem (not the run's): the trial could not be checked. */
  error?: string;
}

/** Default time budget for eval runs: generous, so chaos (a hung worker, a server restart) never trips it. */
const EVAL_MAX_SECONDS = 180;

export function runInput(s: Scenario): AgentInput {
  return {
    goal: s.goal,
    principal: String(s.principal),
    allow: s.allow,
    budget: { max_seconds: EVAL_MAX_SECONDS, ...s.budget },
    approval_timeout_seconds: 120,
  };
}

export function scriptOf(replies: readonly ScriptedReply[], slowStep?: number) {
  const steps: Record<number, Reply> = {};
  replies.forEach((r, i) => {
    const extras = i + 1 === slowStep ? { delayMs: SLOW_STEP_MS } : {};
    steps[i + 1] =
      'tool' in r
        ? tool(r.tool, r.args, extras)
        : 'final' in r
          ? final(r.final, extras)
          : 'escalate' in r
            ? escalate(r.escalate, extras)
            : malformed(r.malformed, extras);
  });
  return byStep(steps);
}

export async function runTrial(ctx: RunContext, plan: TrialPlan): Promise<TrialResult> {
  const { scenario: s, workflowId: id } = plan;
  const input = runInput(s);
  await writeRunWorld(ctx.worldDir, id, s);
  if (ctx.llm && s.model !== 'live') ctx.llm.script(id, scriptOf(s.model.script, plan.cancelAtStep));

  const handle = await retry(`start ${id}`, async () => {
    try {
      return (await startRun(ctx.client, ctx.env, input, id)) as WorkflowHandle<typeof reactAgent>;
    } catch (err) {
      // An earlier attempt did start it, and only the answer was lost (a server restart).
      if (err instanceof WorkflowExecutionAlreadyStartedError)
        return ctx.client.workflow.getHandle<typeof reactAgent>(id);
      throw err;
    }
  });

  let finished = false;
  const operator = needsPerson(s) ? operate(ctx, s, id, handle, () => finished) : Promise.resolve();
  const cancel =
    plan.cancelAtStep !== undefined
      ? cancelAtStep(ctx, id, handle, plan.cancelAtStep, () => finished, plan.onCancel)
      : Promise.resolve();
  try {
    // Patient: under continuous chaos a run may wait minutes for a live worker and server.
    await retry(
      `result of ${id}`,
      async () => {
        try {
          await runResult(handle);
        } catch (err) {
          if (err instanceof WorkflowFailedError) return; // ended; the history says how
          throw err;
        }
      },
      RESULT_PATIENCE_MS,
    );
  } finally {
    finished = true;
  }
  await Promise.all([operator, cancel]);

  const chain = await retry(`history of ${id}`, () => fetchRunChain(ctx.client, id));
  // One reading of the history; the run record and the step events are two views of it.
  const history = await readRunHistory(id, chain, payloadDecoder(ctx.client));
  const record = runRecordOf(history);
  const { events, costs } = traceOf(history);
  const rows = readRefundRows(ctx.worldDir, id);
  const cancelledOnPurpose = plan.cancelAtStep !== undefined && record.cancelRequestedAtMs !== undefined;
  const verdict = checkRun(s, record, rows, cancelledOnPurpose);
  return {
    scenario: s.name,
    slice: s.slice,
    trial: plan.trial,
    workflowId: id,
    record,
    verdict,
    neededTools: s.expect.tools,
    expectEscalate: s.expect.escalate,
    cancelledOnPurpose,
    events,
    stepCosts: costs,
    stopReason: record.result?.stop_reason ?? (record.temporalStatus === 'CANCELLED' ? 'cancelled' : undefined),
    answer: answerOf(record),
    transcript: transcriptOf(record.result, {
      goal: input.goal,
      approvals: history.entries,
      registry: SUPPORT_TOOLS,
      secrets: secretsFromEnv(),
      asked: record.decisions,
    }),
  };
}

/** Chaos's kill switch: waits until the run is at `step` (or waits for a person), then cancels it. */
async function cancelAtStep(
  ctx: RunContext,
  id: string,
  handle: WorkflowHandle<typeof reactAgent>,
  step: number,
  done: () => boolean,
  onCancel?: () => void,
): Promise<void> {
  while (!done()) {
    await delay(200);
    try {
      const state = await handle.query(stateQuery);
      if (state.status !== 'running') return;
      if (state.step < step && !state.awaiting_approval) continue;
    } catch {
      continue; // the server or the worker is down for a moment
    }
    onCancel?.();
    await retry(`cancel ${id}`, () => cancelRun(ctx.client, id, 'eval chaos: cancel'));
    return;
  }
}

/** Runs that may wait for a person: a tool that needs approval is allowed, or the model may escalate. */
function needsPerson(s: Scenario): boolean {
  return (
    s.model === 'live' ||
    s.allow.some((t) => SUPPORT_TOOLS[t]?.needsApproval) ||
    s.model.script.some((r) => 'escalate' in r)
  );
}

/** The scenario's operator: answers each pending approval or escalation as the scenario says. */
async function operate(
  ctx: RunContext,
  s: Scenario,
  id: string,
  handle: WorkflowHandle<typeof reactAgent>,
  done: () => boolean,
): Promise<void> {
  while (!done()) {
    await delay(300);
    if (done()) return;
    try {
      const pending = (await handle.query(stateQuery)).awaiting_approval;
      if (!pending) continue;
      if (pending.kind === 'tool_call') {
        await answerApproval(ctx.client, id, {
          id: pending.id,
          decision: s.operator.refunds,
          operator: 'eval',
          ...(s.operator.refunds === 'reject' ? { reason: 'eval operator: not approved' } : {}),
        });
      } else if (s.operator.escalation === 'reject') {
        await answerApproval(ctx.client, id, {
          id: pending.id,
          decision: 'reject',
          operator: 'eval',
          reason: 'eval operator: declined',
        });
      } else {
        await answerApproval(ctx.client, id, {
          id: pending.id,
          decision: 'answer',
          operator: 'eval',
          text: s.operator.escalation.answer,
        });
      }
    } catch {
      // The run moved on, ended, or the server is restarting: look again on the next tick.
    }
  }
}
