// One trial of one τ² task, end to end: the replay model scripted for the run (or the live model),
// a retail conversation run started, the customer talking with it through the `say` Update until it
// ends, then the run's database compared with the task's expected end state by τ²'s hash, and its
// committed writes counted. Every call to the server is retried (chaos restarts it), and a customer
// message is sent again only when the run shows it did not arrive.
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { WorkflowFailedError } from '@temporalio/client';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { runResult, startConversation } from '../../client/agent-client';
import { fetchRunChain, payloadDecoder } from '../../client/history/fetch-chain';
import { readRunHistory } from '../../client/history/read-history';
import { traceOf } from '../../client/history/trace';
import { sayToRun, SayError } from '../../client/conversation';
import type { SayRequest, Turn } from '../../common/conversation/conversation';
import type { AgentInput, AgentResult, AgentState } from '../../common/types';
import type { RetailDB } from '../../domains/retail/db';
import { pyJsonDumps } from '../../domains/retail/python/json';
import type { PyJson } from '../../domains/retail/python/json';
import { retailTools } from '../../domains/retail/tools/index';
import type { TemporalEnv } from '../../runtime/temporal-env';
import type { ScriptedLlmServer } from '../../offline-model/scripted-llm-server';
import type { reactAgent } from '../../workflows/agent/agent';
import { delay, retry } from '../harness/retry';
import { trajectoryOf, trialCost } from '../harness/trial-table';
import type { TrajectoryStep } from '../harness/trial-table';
import type { Customer, CustomerLlm } from './customer';
import { llmCustomer, scriptedCustomer } from './customer';
import type { CommitFault } from './commit-faults';
import type { ExpectedState } from './expected';
import type { ReplayPlan } from './replay-plan';
import { replayScript } from './replay-model';
import { runEndState } from './run-db';
import { identifiersOf, missingIdentifiers } from './id-check';
import type { MissingIdentifier } from './id-check';
import { liveReplay } from './live-replay';
import type { LiveReplay } from './live-replay';
import { transcriptOf } from '../harness/transcript';
import type { TranscriptEntry } from '../harness/transcript';
import type { Tau2Task } from './task';
import { stateQuery } from '../../common/agent-messages';
import { AGENT_WAITING } from '../../common/temporal/search-attributes';
import { DOMAINS, registryOfDomain } from '../../domains/index';
import { secretsFromEnv } from '../../activities/secrets';
import { runRecordOf } from '../run-record';

/** The retail domain's tools: the sensitive fields their specs declare are redacted in the transcript. */
const RETAIL_TOOLS = registryOfDomain(DOMAINS.retail!);

/**
 * replay: the scripted agent (JSON actions) and customer; live: a real model and an LLM customer;
 * live-scripted: the live path (model requests as the worker sends them, an LLM customer through
 * τ²'s user-simulator protocol) against the suite's own scripted server playing the ground truth
 * (live-replay.ts), with the identifier check (id-check.ts). Only `live` measures a model.
 */
export type SuiteMode = 'replay' | 'live' | 'live-scripted';

export interface TaskContext {
  client: Client;
  env: TemporalEnv;
  mode: SuiteMode;
  /** Replay: the scripted model the workers call. */
  llm?: ScriptedLlmServer;
  /** Live: the customer simulator's model. */
  customerLlm?: CustomerLlm;
  /** The workers' retail store (AGENT_RETAIL_DB). */
  retailDbFile: string;
  /** τ²'s get_db_hash (db-hash.ts's faster equal one). */
  hash: (db: RetailDB) => string;
  /** --dump-state: where `<task id>.json` goes. */
  dumpDir?: string;
  /** Told when the customer answered a consent turn (chaos strikes then: the write is about to run). */
  onConsent?: (workflowId: string, tool: string) => void;
}

export interface TaskTrialPlan {
  task: Tau2Task;
  expected: ExpectedState;
  replay: ReplayPlan;
  trial: number;
  workflowId: string;
  /** Write the end state to dumpDir (one trial per task does). */
  dump: boolean;
  /** Chaos: how the first attempt of each of the run's writes stalls. */
  commitFault?: CommitFault;
}

export interface TaskTrialResult {
  task_id: string;
  trial: number;
  workflow_id: string;
  passed: boolean;
  /** τ²'s criterion: the hash of the run's end state equals the hash of the expected one. */
  db_match: boolean;
  expected_hash: string;
  end_hash: string | null;
  stop_reason: string | null;
  steps: number;
  tool_calls: number;
  tokens: number;
  /** What the run's LLM calls cost; null when unknown (a model without a price, or no result). */
  cost_usd: number | null;
  /** The answer the run returned to the customer (its final answer). */
  answer: string | null;
  /** Writes the ground truth commits, writes the run committed, and those beyond (must be 0). */
  gold_writes: number;
  applied_writes: number | null;
  duplicate_writes: number;
  /** The run's effects[]: writes it reports confirmed, and how many of those it learnt by a lookup by key. */
  effects_confirmed: number;
  effects_reconciled: number;
  customer_messages: number;
  latency_ms: number;
  commit_fault?: CommitFault;
  /** The run's steps as its history records them (the report's drill-down). */
  trajectory: TrajectoryStep[];
  /** Prompt tokens the run was charged for, and the part a provider's prefix cache served (when reported). */
  prompt_tokens: number;
  cached_prompt_tokens: number | null;
  /** The whole conversation: the customer's turns, the agent's messages, consent questions and answers, every call and result. */
  transcript: TranscriptEntry[];
  /** live-scripted: the identifier check of the run's decision requests (id-check.ts). */
  identifier_check?: IdentifierCheck;
  /** A harness problem (not the run's). */
  error?: string;
}

export interface IdentifierCheck {
  decisions: number;
  /** Decision requests in native tool-call form (`tools`, parallel_tool_calls false). */
  native_requests: number;
  /** Ground-truth calls made, and identifiers among their arguments. */
  calls: number;
  identifiers: number;
  missing: MissingIdentifier[];
  /** Estimated prompt tokens of each decision request (common/cost/cost.ts estimateTokens), and the cached part. */
  prompt_tokens: number[];
  cached_tokens: number[];
}

/** Time budget of a run (waits for the customer excluded): generous, so chaos never trips it. */
const TASK_MAX_SECONDS = 600;
/** How long a run waits for the customer's next message. */
const IDLE_TIMEOUT_SECONDS = 300;
const POLL_MS = 150;
const RESULT_PATIENCE_MS = 900_000;

export const TAU2_GOAL =
  "You are the shop's customer-service agent. Help the customer with their request, following the policy: " +
  'authenticate them first, look up what you need with your tools, ask for their consent before any change, ' +
  'and give a final answer once their request is settled.';

/** A retail conversation run that may call every retail tool; the principal comes from authentication. */
export function taskRunInput(): AgentInput {
  return {
    goal: TAU2_GOAL,
    domain: 'retail',
    allow: retailTools.map((t) => t.name),
    conversation: { idle_timeout_seconds: IDLE_TIMEOUT_SECONDS },
    // 13 ground-truth actions, an authentication, the agent's messages and retries fit many times over.
    budget: { max_steps: 80, max_tool_calls: 60, max_seconds: TASK_MAX_SECONDS },
  };
}

export async function runTaskTrial(ctx: TaskContext, plan: TaskTrialPlan): Promise<TaskTrialResult> {
  const began = Date.now();
  const id = plan.workflowId;
  if (ctx.mode === 'replay') ctx.llm!.script(id, replayScript(plan.replay));
  const scripted = ctx.mode === 'live-scripted' ? liveReplay(plan.task, plan.replay) : undefined;
  if (scripted) ctx.llm!.script(id, scripted.script);
  const customer = ctx.mode === 'replay' ? scriptedCustomer(plan.task) : llmCustomer(plan.task, ctx.customerLlm!, id);
  // The customer writes in first: the opening is delivered with the start, so the model never
  // decides (or asks for consent) before it, however slow this process is under load.
  const opening = await customer.opening();
  const handle = await retry(`start ${id}`, () => startConversation(ctx.client, ctx.env, taskRunInput(), id, opening));
  let finished = false;
  const talking = converse(ctx, id, handle, customer, () => finished);
  let result: AgentResult | undefined;
  try {
    result = await retry(
      `result of ${id}`,
      async () => {
        try {
          return await runResult(handle);
        } catch (err) {
          if (err instanceof WorkflowFailedError) return undefined; // ended without a result
          throw err;
        }
      },
      RESULT_PATIENCE_MS,
    );
  } finally {
    finished = true;
  }
  await talking;
  const latencyMs = Date.now() - began;
  // The steps from the history, as the scenario suite reads them (one reading, the same drill-down).
  const chain = await retry(`history of ${id}`, () => fetchRunChain(ctx.client, id));
  const history = await readRunHistory(id, chain, payloadDecoder(ctx.client));
  const { events, costs } = traceOf(history);

  const { read, applied } = await runEndState(ctx.retailDbFile, id, (db) => ({
    endHash: ctx.hash(db),
    dumped: plan.dump && ctx.dumpDir ? pyJsonDumps(db as unknown as PyJson) : undefined,
  }));
  const { endHash, dumped } = read;
  if (dumped !== undefined) writeFileSync(path.join(ctx.dumpDir!, `${plan.task.id}.json`), `${dumped}\n`);
  const dbMatch = endHash === plan.expected.hash;
  const duplicates = Math.max(0, applied - plan.expected.writes);
  const confirmed = (result?.effects ?? []).filter((e) => e.state === 'confirmed');
  // Each write exactly once, and listed: the store's applied writes are the run's confirmed effects.
  const passed = dbMatch && duplicates === 0 && confirmed.length === applied;
  return {
    task_id: plan.task.id,
    trial: plan.trial,
    workflow_id: id,
    passed,
    db_match: dbMatch,
    expected_hash: plan.expected.hash,
    end_hash: endHash,
    stop_reason: result?.stop_reason ?? null,
    steps: result?.usage.steps ?? 0,
    tool_calls: result?.usage.tool_calls ?? 0,
    tokens: result?.usage.total_tokens ?? 0,
    cost_usd: trialCost(result?.usage, costs),
    answer: result?.answer ?? null,
    gold_writes: plan.expected.writes,
    applied_writes: applied,
    duplicate_writes: duplicates,
    effects_confirmed: confirmed.length,
    effects_reconciled: confirmed.filter((e) => e.via === 'reconcile').length,
    customer_messages: result?.conversation?.customer_messages ?? 0,
    latency_ms: latencyMs,
    prompt_tokens: result?.usage.prompt_tokens ?? 0,
    cached_prompt_tokens: cachedTokensOf(result?.usage),
    transcript: transcriptOf(result, {
      approvals: history.entries,
      registry: RETAIL_TOOLS,
      secrets: secretsFromEnv(),
      asked: history.input ? runRecordOf(history).decisions : [],
    }),
    ...(scripted ? { identifier_check: identifierCheck(scripted) } : {}),
    ...(plan.commitFault ? { commit_fault: plan.commitFault } : {}),
    trajectory: trajectoryOf(events),
  };
}

/**
 * The customer's side after the opening (sent with the start): an answer to each new agent turn the run shows,
 * until the run ends. Each message is sent once: after a failed send the run is asked whether it
 * arrived before it is sent again.
 */
async function converse(
  ctx: TaskContext,
  id: string,
  handle: WorkflowHandle<typeof reactAgent>,
  customer: Customer,
  done: () => boolean,
): Promise<void> {
  const { client } = ctx;
  let answered = 0; // the number of the last agent turn answered
  while (!done()) {
    await delay(POLL_MS);
    const waiting = await waitingFor(handle);
    if (waiting === 'ended') return;
    if (waiting === 'other') continue;
    const state = await handle.query(stateQuery).catch(() => undefined);
    if (!state) continue; // the server or the workers are down for a moment
    if (state.status !== 'running') return;
    const conversation = state.conversation;
    const last: Turn | undefined = conversation?.last_message;
    if (!conversation || !last || last.n <= answered) continue;
    const turns: Turn[] = conversation.turns;
    if (turns.some((t) => t.from === 'customer' && t.n > last.n)) {
      answered = last.n;
      continue;
    }
    const reply = await customer.reply(last, turns);
    const after = last.n;
    const sent = await sendOnce(
      client,
      id,
      handle,
      reply,
      (s) => s.conversation?.turns.some((t) => t.from === 'customer' && t.n > after) === true,
      done,
    );
    if (!sent || reply.end) return;
    if (last.consent) ctx.onConsent?.(id, last.consent.tool);
    answered = after;
  }
}

/**
 * Whether the run may wait for the customer, from its description: the server answers that alone, where
 * a Query is a workflow task on a worker, and the customer polls every few hundred milliseconds for the
 * whole run. `customer` also when the run does not say (no AgentWaiting attribute: a server without it)
 * or the server is down for a moment: the Query decides then.
 */
async function waitingFor(handle: WorkflowHandle<typeof reactAgent>): Promise<'ended' | 'customer' | 'other'> {
  const description = await handle.describe().catch(() => undefined);
  if (!description) return 'customer';
  if (description.status.name !== 'RUNNING') return 'ended';
  const kind = description.typedSearchAttributes.get(AGENT_WAITING);
  return kind === undefined || kind === 'customer' || kind === 'consent' ? 'customer' : 'other';
}

/** Sends a message; on a failure, sends it again only if the run's state shows it did not arrive. */
async function sendOnce(
  client: Client,
  id: string,
  handle: WorkflowHandle<typeof reactAgent>,
  message: SayRequest,
  arrived: (state: AgentState) => boolean,
  done: () => boolean,
): Promise<boolean> {
  for (let wait = 200; !done(); wait = Math.min(wait * 2, 2000)) {
    try {
      await sayToRun(client, id, message);
      return true;
    } catch (err) {
      if (err instanceof SayError && /has ended|not a conversation/.test(err.message)) return false;
    }
    // Sent again only once the run says it does not have it (the answer may have been lost, not the message).
    for (;;) {
      await delay(wait);
      if (done()) return false;
      const state = await handle.query(stateQuery).catch(() => undefined);
      if (!state) continue;
      if (arrived(state)) return true;
      if (state.status !== 'running') return false;
      break;
    }
  }
  return false;
}

function identifierCheck(scripted: LiveReplay): IdentifierCheck {
  const calls = scripted.decisions.filter((d) => d.call);
  return {
    decisions: scripted.decisions.length,
    native_requests: scripted.nativeRequests,
    calls: calls.length,
    identifiers: calls.reduce((n, d) => n + identifiersOf(d.call!.args).length, 0),
    missing: missingIdentifiers(scripted.decisions),
    prompt_tokens: scripted.usage.map((u) => u.prompt_tokens),
    cached_tokens: scripted.usage.map((u) => u.cached_tokens),
  };
}

/** The run's cached prompt tokens, when its usage reports them (cached_prompt_tokens). */
function cachedTokensOf(usage: AgentResult['usage'] | undefined): number | null {
  const cached = (usage as { cached_prompt_tokens?: unknown } | undefined)?.cached_prompt_tokens;
  return typeof cached === 'number' ? cached : null;
}
