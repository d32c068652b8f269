// Records the workflow histories that test/replay.test.ts replays, so a change to workflow code
// that alters the command sequence of an existing run fails the suite. Re-record deliberately
// (and guard the change with `patched`) when the workflow must change:
//   TEMPORAL_ADDRESS=127.0.0.1:7233 node dist/scripts/record-histories.js
import { mkdir, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { NativeConnection } from '@temporalio/worker';
import { cancelRun, runResult, startRun } from '../client/agent-client';
import { temporalEnv } from '../client/temporal-env';
import { SEED_DATA } from '../activities/tools/seed-data';
import { DEFAULT_ALLOWED_TOOLS } from '../workflows/tool-catalog';
import { createAgentWorker } from '../worker/create-worker';
import { ScriptedLlmServer } from './scripted-llm-server';
import type { Reply } from './scripted-llm-server';

const OUT = path.resolve(__dirname, '..', '..', 'test', 'fixtures', 'histories');
const tool = (name: string, args: object): Reply => ({ action: { kind: 'tool', name, args } });

interface Scenario {
  name: string;
  replies: Reply[];
  budget?: Record<string, number>;
  cancelAfterKey?: string;
}

const SCENARIOS: Scenario[] = [
  {
    name: 'refund-success',
    replies: [
      tool('get_user_profile', { user_id: 42 }),
      { status: 429, headers: { 'retry-after': '1' } },
      tool('get_user_billing', { user_id: 42 }),
      tool('search_policy', { query: 'refund policy' }),
      { action: { kind: 'final', answer: 'Yes: USD 49.00 within the 14-day window.' } },
    ],
  },
  { name: 'loop-detected', replies: [tool('search_policy', { query: 'refund' }), tool('search_policy', { query: 'refund' })] },
  { name: 'max-seconds', replies: [tool('get_user_profile', { user_id: 42 }), { hang: true }], budget: { max_seconds: 2 } },
  { name: 'cancelled', replies: [tool('get_user_profile', { user_id: 42 }), { hang: true }], cancelAfterKey: 'decide:2' },
];

async function main(): Promise<void> {
  const env = { ...temporalEnv(), taskQueue: `record-${Date.now()}` };
  const llm = await ScriptedLlmServer.start();
  const nativeConnection = await NativeConnection.connect({ address: env.address });
  const worker = await createAgentWorker({
    connection: nativeConnection,
    namespace: env.namespace,
    taskQueue: env.taskQueue,
    deps: {
      llm: { apiKey: 'record', baseURL: llm.baseUrl, model: 'scripted', timeoutMs: 30_000 },
      data: async () => SEED_DATA,
    },
  });
  const client = new Client({ connection: await Connection.connect({ address: env.address }), namespace: env.namespace });
  await mkdir(OUT, { recursive: true });
  await worker.runUntil(async () => {
    for (const scenario of SCENARIOS) {
      const id = `history-${scenario.name}-${Date.now()}`;
      llm.script(id, scenario.replies);
      const handle = await startRun(client, env, { goal: 'User 42 asked: Can I get a refund now?', user_id: 42, allow: [...DEFAULT_ALLOWED_TOOLS], budget: scenario.budget }, id);
      if (scenario.cancelAfterKey) {
        await llm.waitFor((r) => r.idempotencyKey === `${id}:${scenario.cancelAfterKey}`, 20_000);
        await cancelRun(client, id, 'recording a cancelled run');
      }
      const result = await runResult(handle);
      const history = await handle.fetchHistory();
      await writeFile(path.join(OUT, `${scenario.name}.json`), historyToJSON(history) + '\n');
      console.log(`${scenario.name}: ${result.stop_reason}, ${history.events?.length ?? 0} events`);
    }
  });
  await client.connection.close();
  await nativeConnection.close();
  await llm.close();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
