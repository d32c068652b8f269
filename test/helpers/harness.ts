// Shared test plumbing: the real dev server started by `npm test` (scripts/test.ts passes its
// address in the environment), a Temporal client, agent inputs (worker processes: local-servers/worker-process.ts).
import { randomUUID } from 'node:crypto';
import * as path from 'node:path';
import type { Client } from '@temporalio/client';
import { createClient } from '../../client/connect';
import { initNamespace } from '../../local-servers/namespace';
import { temporalEnv } from '../../runtime/temporal-env';
import type { TemporalEnv } from '../../runtime/temporal-env';
import { defaultAllowedToolsOf } from '../../domains/index';
import { supportDomain } from '../../domains/support/index';
import type { AgentInput, AgentResult } from '../../common/types';

export const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');
export const DIST = path.join(REPO_ROOT, 'dist');

export function uniqueId(prefix: string): string {
  return `${prefix}-${randomUUID().slice(0, 8)}`;
}

export function testEnv(taskQueue: string, overrides: Partial<TemporalEnv> = {}): TemporalEnv {
  if (!process.env.TEMPORAL_ADDRESS) {
    throw new Error('TEMPORAL_ADDRESS is not set: run the suite with `npm test`, which starts a dev server');
  }
  return { ...temporalEnv(), taskQueue, ...overrides };
}

/** A client like the CLI's: it encrypts and decrypts payloads when codecEnv configures a key. */
export async function connectClient(env: TemporalEnv, codecEnv: NodeJS.ProcessEnv = process.env): Promise<Client> {
  return createClient(env, codecEnv);
}

/** Registers `namespace` (and the agent's search attributes) on env's server: a file whose listings must be exact. */
export async function ensureNamespace(env: TemporalEnv, namespace: string): Promise<void> {
  const admin = await connectClient(env);
  try {
    await initNamespace(admin.connection, namespace);
  } finally {
    await admin.connection.close();
  }
}

export const REFUND_GOAL =
  'User 42 asked: Can I get a refund now? Use tools to verify profile, billing state, and policy. ' +
  'Return a short final answer in English with USD amount and reason.';

/** A result's trace as [step, tool, ok] rows. */
export const traceRows = (result: AgentResult): Array<[number, string, boolean]> =>
  result.trace.map((t) => [t.step, t.tool, t.ok]);

/** The refund scenario (user 42) in traceRows(): profile, billing, policy, each read once and ok. */
export const REFUND_SCENARIO_ROWS: Array<[number, string, boolean]> = [
  [1, 'get_user_profile', true],
  [2, 'get_user_billing', true],
  [3, 'search_policy', true],
];

export function agentInput(overrides: Partial<AgentInput> = {}): AgentInput {
  return { goal: REFUND_GOAL, principal: '42', allow: [...defaultAllowedToolsOf(supportDomain)], ...overrides };
}

/** Polls until `check` returns a value (not undefined); fails with `what` after the timeout. */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (err) {
      lastError = err;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}${lastError ? `: ${String(lastError)}` : ''}`);
}
