// `agent chat [GOAL] [run flags] [--id ID]`: a conversation in the terminal. Starts a conversation
// run (or attaches to the one running under --id), prints the agent's messages as they come, and
// sends each line read from stdin as the customer's message once the agent waits for one (lines
// typed earlier wait here, in order, but never answer a consent question: cli/chat-input.ts);
// `/end` ends the conversation. Reads a pipe as well as a
// terminal; at the end of stdin it leaves the conversation running (`agent say`, `agent chat --id`).
import { createInterface } from 'node:readline';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { reactAgent } from '../../workflows/agent/agent';
import { existingRun, RunNotFoundError, runResult, runState, startRun } from '../../client/agent-client';
import { sayToRun, SayError } from '../../client/conversation';
import { AgentError, EXIT } from '../../client/agent-error';
import type { SayRequest } from '../../common/conversation/conversation';
import { stopReasonDescription } from '../../common/stop-reasons';
import type { AgentInput, AgentState } from '../../common/types';
import { UsageError, usageText } from '../cli-args';
import type { CommandContext } from '../cli-context';
import { defineCommand, isDeadlineExceeded, line, printJson, progressOut, sleep, withDeadline } from '../cli-context';
import { exitCodeOf } from '../exit-codes';
import { MissingPrincipalError, RUN_INPUT_FLAGS, runInputOf } from '../run-input';
import { runUrl } from '../../runtime/temporal-env';
import { defaultWorkflowId } from './run';
import { sendOrExplain, SAY_TIMEOUT_MS } from './say';
import { ChatLines, END_COMMAND } from '../chat-input';
import type { CustomerWait } from '../chat-input';
import { YouPrompt } from '../you-prompt';

const HINT = 'see `agent help chat`';
export { END_COMMAND };
const POLL_MS = 200;
/** How long one poll of the state query may take (it needs a worker). */
const QUERY_TIMEOUT_MS = 5_000;

export const DEFAULT_CHAT_GOAL =
  'Help the customer with their request: greet them, ask for what you need to know, look it up with your ' +
  'tools, and give a final answer once their request is settled.';

const spec = {
  positionals: [
    {
      name: 'GOAL',
      required: false,
      help: "the agent's instructions for this conversation (default: help the customer)",
    },
  ],
  flags: {
    ...RUN_INPUT_FLAGS,
    'idle-timeout': {
      kind: 'int',
      value: 'SECONDS',
      help: "how long the run waits for the customer's next message before it ends idle_timeout (default 3600)",
    },
    id: {
      kind: 'string',
      value: 'ID',
      help: 'workflow id: attach to this conversation if it runs, else start it under this id',
    },
  },
} as const;

export const chat = defineCommand({
  spec,
  usage: usageText(
    'agent chat [GOAL] [run flags] [--idle-timeout SECONDS] [--id ID] [-o text|json]\n' +
      '(each line of stdin is a message to the agent; /end ends the conversation; exit code as `agent result`)',
    spec,
  ),
  async run(args, ctx) {
    const { flags } = args;
    const goal = args.positionals[0] ?? DEFAULT_CHAT_GOAL;
    if (goal.trim() === '') throw new UsageError('the goal must not be empty', HINT);
    const conversation = flags['idle-timeout'] !== undefined ? { idle_timeout_seconds: flags['idle-timeout'] } : {};
    const inputOf = () => runInputOf(goal, flags, HINT, { conversation });
    let input: AgentInput | undefined;
    try {
      input = inputOf();
    } catch (err) {
      // Attaching to a running conversation needs no principal: it is the run's. Starting one does.
      if (!(err instanceof MissingPrincipalError && flags.id !== undefined)) throw err;
    }
    const client = await ctx.client();
    const workflowId = flags.id ?? defaultWorkflowId(input?.principal);
    // The conversation itself goes to stdout; what the command says about it, to stderr.
    const progress = ctx.io.stderr;
    if (flags.id !== undefined && (await isRunning(client, flags.id))) {
      await refuseUnlessConversation(client, workflowId);
      line(progress, `attached to ${workflowId}`);
    } else {
      try {
        await startRun(client, ctx.env, input ?? inputOf(), workflowId);
      } catch (err) {
        if (err instanceof WorkflowExecutionAlreadyStartedError)
          throw new AgentError(`a run with id "${workflowId}" is still running; choose another --id`);
        throw err;
      }
      line(progress, `started conversation ${workflowId}`);
      line(progress, `  Web UI: ${runUrl(ctx.env, workflowId)}`);
    }
    line(progress, `  type a message and press Enter; ${END_COMMAND} ends the conversation`);
    return converse(client, workflowId, ctx);
  },
});

async function isRunning(client: Client, workflowId: string): Promise<boolean> {
  try {
    return (await (await existingRun(client, workflowId)).describe()).status.name === 'RUNNING';
  } catch (err) {
    if (err instanceof RunNotFoundError) return false;
    throw err;
  }
}

/** Attaching to a run that is no conversation would wait for turns that never come. */
async function refuseUnlessConversation(client: Client, workflowId: string): Promise<void> {
  const handle = client.workflow.getHandle<typeof reactAgent>(workflowId);
  let state: AgentState;
  try {
    state = await withDeadline(client, QUERY_TIMEOUT_MS, () => runState(handle));
  } catch {
    return; // no worker yet: the chat waits for it
  }
  if (!state.conversation)
    throw new AgentError(`run ${workflowId} is not a conversation (\`agent watch ${workflowId}\` follows any run)`);
}

/** The lines of stdin, in order, as they come, each with the last turn shown when it was entered; closed once read to its end. */
function stdinLines(shown: () => number, onLine: () => void): { lines: ChatLines; closed(): boolean } {
  const lines = new ChatLines();
  let closed = false;
  const reader = createInterface({ input: process.stdin, terminal: false });
  reader.on('line', (text) => {
    lines.push(text, shown());
    onLine();
  });
  reader.on('close', () => (closed = true));
  return { lines, closed: () => closed && lines.size === 0 };
}

async function converse(client: Client, workflowId: string, ctx: CommandContext): Promise<number> {
  // Without a run id: the handle follows the conversation across continue-as-new.
  const handle = client.workflow.getHandle<typeof reactAgent>(workflowId);
  const out = progressOut(ctx);
  let printed = 0;
  // On a terminal the chat shows `you: ` while it waits for the customer (the terminal echoes what
  // they type after it); piped, it echoes each line it sends as `you: TEXT` instead.
  const prompt = new YouPrompt(process.stdin.isTTY === true, out);
  const input = stdinLines(
    () => printed,
    () => prompt.answered(),
  );
  const echo = !process.stdin.isTTY;
  let endSent = false;
  const warned = { noWorker: false };
  for (;;) {
    const state = await stateOf(client, handle, ctx, warned);
    if (state === 'ended') break;
    if (state) {
      if (hasNewTurns(state, printed)) prompt.interrupt();
      printed = printTurns(state.conversation?.turns ?? [], printed, out);
      if (state.status !== 'running') break;
      if (state.phase === 'awaiting_customer' && state.conversation?.unanswered === 0 && !endSent) {
        if (input.lines.size === 0 && !input.closed()) prompt.show();
        if (input.closed()) {
          prompt.interrupt();
          line(
            out,
            `stdin closed: the conversation goes on (agent say ${workflowId} TEXT, agent chat --id ${workflowId})`,
          );
          return EXIT.OK;
        }
        const next = input.lines.next(waitOf(state));
        if (next && 'dropped' in next) {
          prompt.interrupt();
          line(
            ctx.io.stderr,
            `agent: not sent: ${JSON.stringify(next.dropped.text)} was typed before the question above; type your answer to it now`,
          );
          continue;
        }
        const message = next === undefined ? undefined : messageOf(next.send.text);
        if (next && message) {
          if (echo && message.text !== undefined) line(out, `you: ${message.text}`);
          // With the turn it was written after: the run refuses it as a consent answer if that was before the question.
          endSent =
            (await send(client, workflowId, { ...message, seen: next.send.shown }, ctx)) && message.end === true;
          continue;
        }
      }
    }
    await sleep(POLL_MS);
  }
  prompt.interrupt();
  const result = await runResult(handle);
  printTurns(result.conversation?.turns ?? [], printed, out);
  if (result.answer !== undefined) line(out, `agent: ${result.answer}`);
  if (ctx.output !== 'text') printJson(ctx, result);
  else line(out, `conversation ended: ${result.stop_reason} (${stopReasonDescription(result.stop_reason)})`);
  return exitCodeOf(result);
}

/** True when the run has turns the chat has not printed yet. */
function hasNewTurns(state: AgentState, printed: number): boolean {
  return (state.conversation?.turns ?? []).some((t) => t.n > printed && t.from === 'agent');
}

/** The wait the run is in: a consent question when its last turn asks one. */
function waitOf(state: AgentState): CustomerWait {
  const asked = state.conversation?.last_message;
  return asked?.consent ? { question: asked.n } : {};
}

/** A line as a message: `/end` ends the conversation, a blank line is nothing. */
function messageOf(text: string): SayRequest | undefined {
  if (text.trim() === END_COMMAND) return { end: true };
  return text.trim() === '' ? undefined : { text };
}

/** Prints the agent's turns after `printed`; returns the last turn number seen. */
function printTurns(
  turns: readonly { n: number; from: string; text: string }[],
  printed: number,
  out: CommandContext['io']['stdout'],
): number {
  let last = printed;
  for (const turn of turns) {
    if (turn.n <= last) continue;
    if (turn.from === 'agent') line(out, `agent: ${turn.text}`);
    last = turn.n;
  }
  return last;
}

/** The run's state; 'ended' once it has ended; undefined when it did not answer this time. */
async function stateOf(
  client: Client,
  handle: WorkflowHandle<typeof reactAgent>,
  ctx: CommandContext,
  warned: { noWorker: boolean },
): Promise<AgentState | 'ended' | undefined> {
  try {
    return await withDeadline(client, QUERY_TIMEOUT_MS, () => runState(handle));
  } catch (err) {
    const { status } = await handle.describe();
    if (status.name !== 'RUNNING') return 'ended';
    // Said once: the chat goes on waiting, a worker may yet come.
    if (!warned.noWorker && isDeadlineExceeded(err)) {
      warned.noWorker = true;
      line(ctx.io.stderr, 'agent: the run does not answer; is a worker polling its task queue? (npm run worker)');
    }
    return undefined;
  }
}

/** Sends a message; a refusal is one line on stderr and the conversation goes on. True when it was taken. */
async function send(client: Client, workflowId: string, message: SayRequest, ctx: CommandContext): Promise<boolean> {
  try {
    await sendOrExplain(workflowId, () =>
      withDeadline(client, SAY_TIMEOUT_MS, () => sayToRun(client, workflowId, message)),
    );
    return true;
  } catch (err) {
    if (!(err instanceof SayError)) throw err;
    line(ctx.io.stderr, `agent: ${err.message}`);
    return false;
  }
}
