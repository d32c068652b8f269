// Whose run an MCP call belongs to, proven: the worker sends the run (its workflow id and the
// chain's first run id) with an HMAC under AGENT_MCP_RUN_SECRET, a secret only the worker and this
// project's MCP server hold (it never enters a call's input or the history). The server keeps an
// authenticated customer under a proven run only, so a caller that merely names a run key cannot
// act as that run's customer, and a new run under the same workflow id starts unauthenticated.
// The proof is per request: it covers the tool, its arguments and every `_meta` entry the server
// reads (run, principal, idempotency key, lookup kind), so a captured one only repeats that very
// request (a write's repeat is deduplicated by its idempotency key), never another call or a lookup
// turned into a call.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { MCP_META } from '../../common/mcp/meta';

export const RUN_SECRET_ENV = 'AGENT_MCP_RUN_SECRET';

export function runSecret(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const value = env[RUN_SECRET_ENV]?.trim();
  return value ? value : undefined;
}

/** What a proof covers: the request's tool, arguments and `_meta` (the proof itself aside). */
export interface ProvenRequest {
  name: string;
  arguments: unknown;
  meta: Record<string, unknown>;
}

/** The `_meta` keys a proof covers: every one the server reads but the proof. */
const COVERED = Object.values(MCP_META).filter((key) => key !== MCP_META.runProof);

/** The HMAC-SHA256 (hex) of the request, encoded unambiguously (a JSON array, object keys sorted). */
export function runProof(secret: string, request: ProvenRequest): string {
  const meta = COVERED.map((key) => [key, request.meta[key] ?? null]);
  const text = canonicalJson(['run-proof/2', request.name, request.arguments ?? {}, meta]);
  return createHmac('sha256', secret).update(text).digest('hex');
}

/** Whether the request's `_meta.run_proof` proves it under `secret` (compared in constant time). */
export function runProven(secret: string, request: ProvenRequest): boolean {
  const proof = request.meta[MCP_META.runProof];
  if (typeof proof !== 'string') return false;
  const expected = Buffer.from(runProof(secret, request), 'utf8');
  const given = Buffer.from(proof, 'utf8');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * The request's `_meta` with the run named (and proven when the worker holds the secret), for a
 * server whose config opts in (`run_identity`); any other server gets `meta` only.
 */
export function withRunMeta(
  request: { name: string; arguments: unknown },
  meta: Record<string, string>,
  run: { runKey?: string; chain?: string; principal?: string } | undefined,
  env: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  if (!run) return meta;
  const named: Record<string, string> = {
    ...meta,
    // The run's records on the server (this project's retail server: the run's database).
    ...(run.runKey ? { [MCP_META.runKey]: run.runKey } : {}),
    ...(run.runKey && run.chain ? { [MCP_META.runChain]: run.chain } : {}),
    ...(run.principal !== undefined ? { [MCP_META.principal]: run.principal } : {}),
  };
  const secret = runSecret(env);
  if (!secret || !run.runKey || !run.chain) return named;
  return { ...named, [MCP_META.runProof]: runProof(secret, { ...request, meta: named }) };
}

/** JSON with every object's keys sorted: the same text for the same value on both sides. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        )
      : v,
  );
}
