// `npm run demo`: the refund scenario (user 42) end to end on a real Temporal server, with nothing
// else set up. Starts (or reuses) a local dev server, runs a worker in this process on a task
// queue of its own, starts one run, shows its steps as they happen, its answer and its Web UI
// address, then shuts down everything it started.
//
// LLM: OpenAI (or OPENAI_BASE_URL) when OPENAI_API_KEY is set; otherwise a scripted
// OpenAI-compatible server on localhost that plays the scenario deterministically. Either way the
// worker's real `openai` client makes real HTTP calls: the code path is the same.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import readline from 'node:readline';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import type { Client } from '@temporalio/client';
import { llmConfigFromEnv } from '../activities/decide/llm-config';
import type { LlmConfig } from '../activities/decide/llm-config';
import { loadPrices, lookUpPrice } from '../runtime/prices';
import { createAgentWorker } from '../worker/create-worker';
import { defaultAllowedToolsOf } from '../domains/index';
import { supportDomain } from '../domains/support/index';
import { cancelRun, runResult } from '../client/agent-client';
import { parseArgs, UsageError, usageText } from '../cli/cli-args';
import { connectClient } from '../cli/cli-context';
import { defaultWorkflowId } from '../cli/commands/run';
import { followRun } from '../cli/follow-run';
import { formatResult } from '../cli/format';
import { terminalSafe } from '../cli/terminal-text';
import { DEFAULT_TASK_QUEUE, runUrl } from '../runtime/temporal-env';
import type { TemporalEnv } from '../runtime/temporal-env';
import { ensureLocalServer } from '../local-servers/local-server';
import type { LocalServer } from '../local-servers/local-server';
import { refundApprovalDemoModel, refundDemoModel } from '../offline-model/offline-model';
import { REFUND_DEMO_FLAGS, refundDemoStore, runRefundDemo, startDemoRun } from './demo-refund';
import type { RefundDemoStore } from './demo-refund';
import { startScriptedModel } from '../worker/offline-model';

export const DEMO_USER_ID = 42;
export const DEMO_GOAL =
  'User 42 asked: Can I get a refund now? Use tools to verify profile, billing state, and policy. ' +
  'Return a short final answer in English with USD amount and reason.';

const spec = {
  positionals: [],
  flags: {
    'keep-server': { kind: 'boolean', help: 'if the demo started the dev server, keep it running until Ctrl-C' },
    ...REFUND_DEMO_FLAGS,
  },
} as const;
const USAGE = usageText('npm run demo [-- --keep-server] [--refund [--auto-approve]]', spec);

class Interrupted extends Error {}

// Everything the demo prints passes here: model and tool text never drives the terminal.
const say = (text = ''): void => void process.stdout.write(terminalSafe(text) + '\n');

async function main(argv: string[]): Promise<number> {
  const args = parseArgs(argv, spec, 'usage: npm run demo [-- --keep-server]');
  if (args.help) {
    say(USAGE);
    return 0;
  }
  const keepServer = args.flags['keep-server'] === true;
  const refund = args.flags.refund === true;
  if (args.flags['auto-approve'] && !refund)
    throw new UsageError(
      '--auto-approve needs --refund',
      'usage: npm run demo [-- --keep-server] [--refund [--auto-approve]]',
    );

  // Quiet worker logs (bundling, state changes); warnings and errors still show. The demo handles
  // Ctrl-C itself, so it can cancel its run before the worker goes away.
  Runtime.install({ logger: new DefaultLogger('WARN'), shutdownSignals: [] });
  let interrupt: (err: Interrupted) => void = () => undefined;
  const interrupted = new Promise<never>((_, reject) => (interrupt = reject));
  interrupted.catch(() => undefined);
  // Persistent handlers (not `once`): the dev-server helper re-raises a signal nobody else handles.
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    if (++signals > 1) {
      process.stderr.write(`demo: ${signal} again; exiting now\n`);
      process.exit(130); // exit handlers still stop the dev server's process
    }
    interrupt(new Interrupted(signal === 'SIGINT' ? 'interrupted (Ctrl-C)' : `terminated (${signal})`));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  say('Durable ReAct agent demo: a Temporal workflow owns the loop; every LLM decision and tool call is an activity.');
  say();

  const cleanups: Array<() => Promise<unknown>> = [];
  let server: LocalServer | undefined;
  let keep = keepServer;
  try {
    say(
      'Temporal: looking for a server (starting a local dev server if none answers; the first time may build the Temporal CLI) ...',
    );
    server = await Promise.race([ensureLocalServer(), interrupted]);
    if (server.stop) {
      say(
        `Temporal: started a dev server at ${server.address}; Web UI ${server.uiUrl}; history in ${shownPath(server.dbFile)}`,
      );
    } else {
      say(`Temporal: reusing the server at ${server.address} (namespace ${server.namespace}); Web UI ${server.uiUrl}`);
    }

    const llm = await chooseLlm(cleanups, refund);
    let store: RefundDemoStore | undefined;
    if (refund) {
      const opened = refundDemoStore();
      cleanups.push(() => opened.close());
      store = opened;
    }
    const env: TemporalEnv = {
      address: server.address,
      namespace: server.namespace,
      // A queue of its own: the demo's worker does not take work meant for other workers, and
      // other workers (with other LLM settings) do not take the demo's run.
      taskQueue: `${DEFAULT_TASK_QUEUE}-demo-${randomBytes(3).toString('hex')}`,
      uiUrl: server.uiUrl,
    };

    say(
      `Worker: starting in this process on task queue ${env.taskQueue} (bundling the workflow code takes a few seconds) ...`,
    );
    const connection = await NativeConnection.connect({ address: env.address });
    cleanups.push(() => connection.close());
    const worker = await Promise.race([
      createAgentWorker({
        connection,
        namespace: env.namespace,
        taskQueue: env.taskQueue,
        deps: { llm, ...(store ? { refunds: store.refunds } : {}) },
      }),
      interrupted,
    ]);
    const { client, close } = await connectClient(env);
    cleanups.push(close);

    const workflowId = await worker.runUntil(() =>
      store
        ? runRefundDemo(client, env, { say, interrupted, autoApprove: args.flags['auto-approve'] === true, store })
        : runDemo(client, env, interrupted),
    );
    say();
    say(`Open the run in the Temporal Web UI: ${runUrl(env, workflowId)}`);
    if (server.stop) keep = await keepOrSay(keepServer);
    return 0;
  } catch (err) {
    if (err instanceof Interrupted) {
      process.stderr.write(`demo: ${err.message}; shutting down what the demo started\n`);
      return 130;
    }
    throw err;
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    await finishServer(server, keep);
  }
}

/** OpenAI when a key is set; otherwise the offline scripted server. */
async function chooseLlm(cleanups: Array<() => Promise<unknown>>, refund = false): Promise<LlmConfig> {
  const fromEnv = llmConfigFromEnv();
  if (process.env.OPENAI_API_KEY) {
    say(`LLM: ${fromEnv.model} at ${fromEnv.baseURL ?? 'https://api.openai.com/v1'} (OPENAI_API_KEY is set)`);
    return fromEnv;
  }
  const scripted = await startScriptedModel(refund ? refundApprovalDemoModel : refundDemoModel);
  cleanups.push(() => scripted.close());
  say(`LLM: offline. OPENAI_API_KEY is not set, so the agent talks to a scripted OpenAI-compatible server at`);
  say(`     ${scripted.baseUrl} that plays the refund scenario deterministically. Same code path: the worker's`);
  say(
    `     openai client, real HTTP, the model's JSON validated by the workflow. Set OPENAI_API_KEY to use a real model.`,
  );
  // The scripted model's own price (free unless AGENT_PRICES_FILE says otherwise).
  const price = lookUpPrice('scripted-llm', loadPrices());
  return { ...fromEnv, apiKey: 'offline-demo', baseURL: scripted.baseUrl, model: 'scripted-llm', price };
}

async function runDemo(client: Client, env: TemporalEnv, interrupted: Promise<never>): Promise<string> {
  const workflowId = defaultWorkflowId(String(DEMO_USER_ID));
  say();
  say(`Goal (user ${DEMO_USER_ID}): ${DEMO_GOAL}`);
  const handle = await startDemoRun(client, env, workflowId, say, {
    goal: DEMO_GOAL,
    principal: String(DEMO_USER_ID),
    allow: [...defaultAllowedToolsOf(supportDomain)],
  });
  let watching = true;
  try {
    const follow = followRun(client, handle, { onLine: (text) => watching && say(`  ${text}`) });
    const result = await Promise.race([follow, interrupted]);
    say();
    for (const text of formatResult(result)) say(text);
  } catch (err) {
    watching = false;
    if (err instanceof Interrupted) {
      // Do not leave a run behind whose worker is about to go away.
      process.stderr.write(`demo: ${err.message}; cancelling run ${workflowId}\n`);
      await cancelRun(client, workflowId, `demo ${err.message}`, handle.firstExecutionRunId).catch(() => undefined);
      await client.connection.withDeadline(Date.now() + 5_000, () => runResult(handle)).catch(() => undefined);
    }
    throw err;
  }
  return workflowId;
}

/**
 * Whether to keep the dev server the demo started, so that the link just printed keeps working:
 * --keep-server says yes; else, on a terminal, the demo asks; else it says the link will stop working.
 */
async function keepOrSay(keepServer: boolean): Promise<boolean> {
  if (keepServer) return true;
  say('The link stops working when the demo ends: it stops the dev server it started (`--keep-server` keeps it).');
  if (!process.stdin.isTTY || !process.stdout.isTTY) return false;
  const answer = await ask('Keep the dev server running until Ctrl-C, so that the link works? [y/N] ');
  return /^y(es)?$/i.test(answer.trim());
}

/** One line from the terminal; Ctrl-C or end of input reads as no answer. */
async function ask(question: string): Promise<string> {
  const rl = readline.createInterface({ input: process.stdin, output: process.stdout });
  try {
    return await new Promise<string>((resolve) => {
      rl.question(question, resolve);
      rl.once('SIGINT', () => resolve(''));
      rl.once('close', () => resolve(''));
    });
  } finally {
    rl.close();
  }
}

async function finishServer(server: LocalServer | undefined, keepServer: boolean): Promise<void> {
  if (!server?.stop) {
    if (server) say(`The Temporal server at ${server.address} was already running and keeps running.`);
    return;
  }
  const history = shownPath(server.dbFile);
  if (keepServer) {
    say(`The dev server keeps running, and the link with it: Web UI ${server.uiUrl}.`);
    say('Press Ctrl-C to stop it.');
    await new Promise<void>((resolve) => {
      process.on('SIGINT', () => resolve());
      process.on('SIGTERM', () => resolve());
    });
    say('Stopping the dev server.');
  } else {
    say('Stopping the dev server the demo started (use `npm run demo -- --keep-server` to keep it).');
    say(`Its history stays in ${history}: \`npm run server\` starts a server on it that keeps running,`);
    say(`with this run and the Web UI at ${server.uiUrl}.`);
  }
  await server.stop();
}

/** The dev server's SQLite file as the reader's shell names it: relative to here when inside. */
function shownPath(file: string | undefined): string {
  if (!file) return '.temporal/dev.sqlite';
  const relative = path.relative(process.cwd(), file);
  return relative.startsWith('..') || path.isAbsolute(relative) ? file : relative;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    const message = err instanceof Error ? err.message : String(err);
    process.stderr.write(
      `demo: ${terminalSafe(message)}${err instanceof UsageError && err.hint ? `; ${err.hint}` : ''}\n`,
    );
    if (process.env.AGENT_DEBUG && err instanceof Error) process.stderr.write(`${err.stack}\n`);
    process.exit(err instanceof UsageError ? 2 : 1);
  },
);
