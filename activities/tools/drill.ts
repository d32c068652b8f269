// Fault injection for the read-only tools, for tests and drills: a slow tool. On a call's first
// attempt the tool waits AGENT_TOOL_PAUSE_MS before it runs, as a slow backend would, so a cancel,
// a deadline, a worker crash or a server restart can land while it is in flight. The wait keeps
// heartbeating and ends early when the activity is cancelled (the call then never runs), so a
// cancelled attempt frees its worker slot at once. Effectful tools are never wrapped: they have
// their own knobs (AGENT_REFUND_PAUSE_*), which model a hung attempt, not a slow one.
import { Context, log } from '@temporalio/activity';
import { ALL_TOOLS } from '../../domains/index';
import type { Observation, ToolInput } from '../../common/types';
import { readEnv } from '../../runtime/env-vars';
import { HEARTBEAT_EVERY_MS, sleepUnlessAborted } from './tool-activity';
import type { ToolFn } from './tool-activity';

export interface ToolPause {
  /** How long a first attempt waits before the tool runs; 0 (default) = off. */
  ms: number;
  /** Which read-only tools pause; undefined = all of them. */
  tools?: readonly string[];
}

export const NO_TOOL_PAUSE: ToolPause = { ms: 0 };

/** AGENT_TOOL_PAUSE_MS (milliseconds, default 0) and AGENT_TOOL_PAUSE_TOOLS (comma-separated names, default every read-only tool). */
export function toolPauseFromEnv(env: NodeJS.ProcessEnv = process.env): ToolPause {
  const ms = readEnv('AGENT_TOOL_PAUSE_MS', env);
  const names = readEnv('AGENT_TOOL_PAUSE_TOOLS', env);
  for (const name of names ?? []) {
    const spec = ALL_TOOLS[name];
    if (!spec || spec.effectful) throw new Error(`AGENT_TOOL_PAUSE_TOOLS: "${name}" is not a read-only tool`);
  }
  return { ms, ...(names ? { tools: names } : {}) };
}

/** Wraps the read-only tools in `tools` with the pause; everything else is returned as it is. */
export function withToolPause<T extends Record<string, ToolFn>>(tools: T, pause: ToolPause = toolPauseFromEnv()): T {
  if (pause.ms <= 0) return tools;
  const wrapped: Record<string, ToolFn> = { ...tools };
  for (const [name, tool] of Object.entries(tools)) {
    const spec = ALL_TOOLS[name];
    if (!spec || spec.effectful || (pause.tools && !pause.tools.includes(name))) continue;
    // A named function expression keeps the activity's registered name.
    wrapped[name] = {
      [name]: async (input: ToolInput): Promise<Observation> => {
        const ctx = Context.current();
        if (ctx.info.attempt === 1) {
          // Said in the worker's log: a drill (a kill, a cancel) knows the call is in flight, and under which key.
          log.info(`tool pause: ${name}`, { idempotencyKey: input.idempotency_key });
          await pauseUnlessCancelled(ctx, pause.ms);
        }
        return tool(input);
      },
    }[name]!;
  }
  return wrapped as T;
}

/** Waits ms, heartbeating (cancellation reaches an activity only through its heartbeats); throws once cancelled. */
async function pauseUnlessCancelled(ctx: Context, ms: number): Promise<void> {
  const signal = ctx.cancellationSignal;
  const beat = setInterval(() => ctx.heartbeat(), HEARTBEAT_EVERY_MS);
  try {
    await sleepUnlessAborted(ms, signal);
  } finally {
    clearInterval(beat);
  }
  if (signal.aborted) throw signal.reason ?? new Error('cancelled');
}
