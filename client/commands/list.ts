// `agent list`: recent reactAgent runs, newest first, from Temporal's visibility store.
import { WORKFLOW_TYPE } from '../agent-client';
import { parseArgs, usageText } from '../cli-args';
import type { Command } from '../cli-context';
import { line } from '../cli-context';
import { formatTable, formatTime } from '../format';

export const DEFAULT_LIST_LIMIT = 20;

const spec = {
  positionals: [],
  flags: {
    limit: { kind: 'int', help: `how many runs to show (default ${DEFAULT_LIST_LIMIT})` },
    json: { kind: 'boolean', help: 'print a JSON array of {workflow_id, run_id, status, start_time, close_time}' },
  },
} as const;

export const list: Command = {
  name: 'list',
  summary: 'list recent agent runs',
  usage: usageText('agent list [--limit N] [--json]', spec),
  async run(argv, ctx) {
    const args = parseArgs(argv, spec, 'see `agent help list`');
    if (args.help) {
      line(ctx.io.stdout, list.usage);
      return 0;
    }
    const limit = args.flags.limit ?? DEFAULT_LIST_LIMIT;
    const client = await ctx.client();
    const rows: Array<{ workflow_id: string; run_id: string; status: string; start_time: Date; close_time?: Date }> = [];
    for await (const info of client.workflow.list({ query: `WorkflowType = '${WORKFLOW_TYPE}'`, pageSize: Math.min(limit, 1000) })) {
      rows.push({ workflow_id: info.workflowId, run_id: info.runId, status: info.status.name, start_time: info.startTime, close_time: info.closeTime });
      if (rows.length >= limit) break;
    }

    if (args.flags.json) {
      const doc = rows.map((r) => ({ ...r, start_time: r.start_time.toISOString(), close_time: r.close_time?.toISOString() ?? null }));
      line(ctx.io.stdout, JSON.stringify(doc, null, 2));
      return 0;
    }
    if (rows.length === 0) {
      line(ctx.io.stdout, `no ${WORKFLOW_TYPE} runs in namespace "${ctx.env.namespace}" yet; start one with \`npm run agent -- run "<goal>"\``);
      return 0;
    }
    const table = formatTable(
      ['WORKFLOW ID', 'STATUS', 'STARTED', 'CLOSED'],
      rows.map((r) => [r.workflow_id, r.status, formatTime(r.start_time), formatTime(r.close_time)]),
    );
    for (const text of table) line(ctx.io.stdout, text);
    return 0;
  },
};
