// `agent limits [SCOPE]`: the fleet-wide LLM rate limits, one limiter workflow per model (or API
// key): its limits, what this minute counts, leases in use, the queue, grants and wait times, from
// the limiter's `limits` query (workflows/limiter/llm-limiter.ts). Queries need a worker of its task queue.
import {
  LIMITER_WORKFLOW_TYPE,
  limiterQuery,
  limiterWorkflowId,
  LIMITER_ID_PREFIX,
} from '../../common/limiter/llm-limiter';
import type { LimiterSnapshot } from '../../common/limiter/rate-limit';
import { usageText } from '../cli-args';
import { WorkflowNotFoundError } from '@temporalio/client';
import { AgentError } from '../../client/agent-error';
import { defineCommand, line, printJson, withDeadline } from '../cli-context';
import { terminalSafe } from '../terminal-text';
import { formatTable } from '../format';

const spec = {
  positionals: [{ name: 'SCOPE', required: false, help: 'one model (or key-<hash>) only; default: every limiter' }],
  flags: {},
} as const;

/** How long each limiter has to answer its query. */
const QUERY_TIMEOUT_MS = 3_000;

type Row = { workflow_id: string; scope: string } & ({ limits_state: LimiterSnapshot } | { error: string });

export const limits = defineCommand({
  spec,
  usage: usageText(
    'agent limits [SCOPE] [-o text|json|jsonl]\n' +
      '(-o json: an array of {workflow_id, scope, limits_state: {limits, window, in_use, queued, granted, wait_ms,\n' +
      ' paused_until, holders}} or {workflow_id, scope, error} (then exit 1); set with AGENT_LLM_TPM, AGENT_LLM_RPM, AGENT_LLM_MAX_IN_FLIGHT)',
    spec,
  ),
  async run(args, ctx) {
    const client = await ctx.client();
    const scope = args.positionals[0];
    const ids: string[] = [];
    if (scope !== undefined) ids.push(limiterWorkflowId(scope));
    else {
      const query = `WorkflowType = '${LIMITER_WORKFLOW_TYPE}' AND ExecutionStatus = 'Running'`;
      for await (const wf of client.workflow.list({ query })) ids.push(wf.workflowId);
    }
    const rows: Row[] = [];
    for (const workflowId of [...new Set(ids)].sort()) {
      const rowScope = workflowId.slice(LIMITER_ID_PREFIX.length);
      try {
        const state = await withDeadline(client, QUERY_TIMEOUT_MS, () =>
          client.workflow.getHandle(workflowId).query(limiterQuery),
        );
        const { scope: _scope, ...snapshot } = state;
        rows.push({ workflow_id: workflowId, scope: rowScope, limits_state: snapshot });
      } catch (err) {
        // A named limiter that does not exist is a mistake of the caller: one line, exit 1.
        if (scope !== undefined && err instanceof WorkflowNotFoundError)
          throw new AgentError(`no rate limiter is running for ${shortScope(scope)} (see \`agent limits\`)`);
        const message = err instanceof Error ? (err.message.split('\n')[0] ?? '').slice(0, 300) : 'unknown error';
        rows.push({ workflow_id: workflowId, scope: rowScope, error: `no answer: ${message}` });
      }
    }

    if (ctx.output === 'json') printJson(ctx, rows);
    else if (ctx.output === 'jsonl') for (const row of rows) printJson(ctx, row);
    else if (rows.length === 0)
      line(
        ctx.io.stdout,
        scope === undefined
          ? 'no LLM rate limiter is running (set AGENT_LLM_TPM / AGENT_LLM_RPM on the workers; docs/rate-limits.md)'
          : `no limiter for ${scope}`,
      );
    else {
      const header = ['MODEL', 'LIMITS', 'THIS MINUTE', 'IN USE', 'QUEUED', 'GRANTED', 'WAIT p50/p95/max', 'PAUSED'];
      const table = rows.map((row) =>
        'error' in row ? [row.scope, row.error, '', '', '', '', '', ''] : cells(row.scope, row.limits_state),
      );
      for (const text of formatTable(header, table)) line(ctx.io.stdout, text);
    }
    const silent = rows.filter((r) => 'error' in r);
    if (silent.length > 0)
      throw new AgentError(
        `${silent.length} limiter(s) did not answer, ${shortScope(silent[0]!.scope)} first (is a worker polling its task queue?)`,
      );
    return 0;
  },
});

function shortScope(scope: string): string {
  const safe = terminalSafe(scope).replace(/\s+/g, ' ');
  return safe.length > 200 ? `${safe.slice(0, 200)}...` : safe;
}

function cells(scope: string, s: LimiterSnapshot): string[] {
  const l = s.limits;
  const limitText = [
    l.tokens_per_minute ? `${l.tokens_per_minute} TPM` : '',
    l.requests_per_minute ? `${l.requests_per_minute} RPM` : '',
    l.max_in_flight ? `${l.max_in_flight} in flight` : '',
  ]
    .filter(Boolean)
    .join(', ');
  return [
    scope,
    `${limitText}; TTL ${l.lease_ttl_ms / 1000} s`,
    `${s.window.tokens} tok, ${s.window.requests} req`,
    `${s.in_use.leases} (${s.in_use.tokens} tok)`,
    `${s.queued.requests} (oldest ${seconds(s.queued.oldest_wait_ms)})`,
    `${s.granted.granted} (${s.granted.expired} expired, ${s.granted.pauses} pauses)`,
    `${seconds(s.wait_ms.median)}/${seconds(s.wait_ms.p95)}/${seconds(s.wait_ms.max)}`,
    s.paused_until ?? '-',
  ];
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}
