// τ² reports built from trial results written by hand (eval/tau2/report.ts does the rest): a live
// model's, whose figures carry the longest labels a report draws (a rate with its standard error, a
// cost partly unknown), and a scripted one's. The browser test lays them out; the unit tests read them.
import type { TaskTrialResult } from '../../eval/tau2/run-task';
import { buildTau2Report } from '../../eval/tau2/report';
import type { Tau2Report } from '../../eval/tau2/report';
import { runMetadata, RETAIL_CONVERSATION_PROMPTS } from '../../eval/harness/run-metadata';
import type { TranscriptEntry } from '../../eval/harness/transcript';

export function sampleTrial(over: Partial<TaskTrialResult> & { task_id: string; trial: number }): TaskTrialResult {
  const transcript: TranscriptEntry[] = [
    { n: 1, from: 'customer', text: 'Please cancel order #W2378156, email yusuf.rossi@example.com' },
    {
      step: 1,
      from: 'tool',
      tool: 'find_user_id_by_email',
      args: { email: 'yusuf.rossi@example.com' },
      ok: true,
      result: '"yusuf_rossi_9620"',
    },
    {
      n: 2,
      from: 'agent',
      text: 'Cancel #W2378156?',
      consent: { tool: 'cancel_pending_order', args: { order_id: '#W2378156' } },
    },
    { n: 3, from: 'customer', text: 'yes' },
    {
      step: 2,
      from: 'tool',
      tool: 'cancel_pending_order',
      args: { order_id: '#W2378156' },
      ok: true,
      result: '{"status":"cancelled"}',
    },
    { n: 4, from: 'customer', text: '', end: true },
  ];
  return {
    workflow_id: `tau2-${over.task_id}-${over.trial}`,
    passed: true,
    db_match: true,
    expected_hash: 'e0',
    end_hash: 'e0',
    stop_reason: 'customer_ended',
    steps: 3,
    tool_calls: 2,
    tokens: 5400,
    cost_usd: 0.0021,
    answer: 'Your order #W2378156 is cancelled.',
    gold_writes: 1,
    applied_writes: 1,
    duplicate_writes: 0,
    effects_confirmed: 1,
    effects_reconciled: 0,
    customer_messages: 2,
    latency_ms: 4200,
    trajectory: [
      {
        step: 1,
        decision: 'tool_call',
        tool: 'find_user_id_by_email',
        summary: 'find the customer',
        observation: 'ok · retail · 18 B',
      },
      {
        step: 2,
        decision: 'tool_call',
        tool: 'cancel_pending_order',
        summary: 'cancel',
        observation: 'ok · retail · 22 B',
      },
      { step: 3, decision: 'message', summary: 'done', stop_reason: 'customer_ended' },
    ],
    prompt_tokens: 5000,
    cached_prompt_tokens: 3800,
    transcript,
    ...over,
  };
}

/** 69 trials a phase, baseline and chaos: the widest figures (rates ± their error, a cost partly unknown). */
export function sampleTau2Report(live: NodeJS.ProcessEnv | undefined): Tau2Report {
  const trials = (phase: string) =>
    Array.from({ length: 69 }, (_, i) =>
      sampleTrial({
        task_id: String(i),
        trial: 1,
        workflow_id: `tau2-${phase}-${i}`,
        ...(i % 9 === 0 ? { passed: false, db_match: false, end_hash: 'e1', stop_reason: 'max_steps' } : {}),
        ...(i % 23 === 0 ? { cost_usd: null } : {}),
      }),
    );
  const metadata = runMetadata(
    {
      suite: 'tau2-retail',
      liveEnv: live,
      prompts: RETAIL_CONVERSATION_PROMPTS,
      seed: 7,
      server: { address: '127.0.0.1:7233', namespace: 'default' },
      ownServer: true,
      webUi: { base: null, note: "no links: the runs were on the eval's own dev server, which ended with it" },
    },
    new Date('2026-12-06T00:00:00Z'),
  );
  return buildTau2Report(
    {
      phases: [
        { phase: 'baseline', trials: trials('baseline'), chaos: [], wallMs: 123_456 },
        { phase: 'chaos', trials: trials('chaos'), chaos: [], wallMs: 234_567 },
      ],
      env: { address: '127.0.0.1:7233', namespace: 'default', taskQueue: 'q', uiUrl: 'http://127.0.0.1:8233' },
      serverKept: false,
      planningMs: 1000,
    },
    {
      mode: live ? 'live' : 'replay',
      chaos: true,
      trials: 1,
      seed: 7,
      tasksFile: 'tasks.json',
      tasks: 69,
      workers: 2,
    },
    metadata,
  );
}
