// How a retail tool is defined: `defineRetailTool` (each file of tools/), the retail domain's
// `defineTool`. The tool's function (pure, over a database, ported from τ²-bench) becomes the
// runtime's tool: it runs on the conversation's own database (services.ts), a refusal of the reference
// ("Order not found", "Non-pending order cannot be cancelled") is an observation with ok false
// and the run goes on, and every write is an effect: the customer's consent first, then applied
// once under its idempotency key whatever the retries, crashes and hangs.
import { defineTool } from '../../common/tools/tool';
import type { ToolContext, ToolDefinition } from '../../common/tools/tool';
import type { Observation } from '../../common/tools/observation';
import type { ReconcileOutput, ToolInput } from '../../common/types';
import { RetailToolError } from './errors';
import type { RetailRecords, RetailServices, WriteRecord } from './services';
import { fromStore, RETAIL_STORE_MISMATCH, storeMismatch } from './store-guard';
import type { RetailTool, RetailToolSpec } from './tools/tool';

export const RETAIL_SOURCE = 'retail-db';

/**
 * A read whose result names a person (`namesPerson`: an order names its owner's user id, address,
 * payment methods) answers only the customer's own orders. Another's reads as the reference's "Order
 * not found", so an order id tells a stranger nothing, not even that the order exists. The function in
 * tools/ stays τ²'s; this rule is the runtime's, applied here and in the gateway.
 */
const NOT_PRINCIPALS = 'Order not found';
/** Writes on an order: the order must be the authenticated customer's. */
const ORDER_WRITES_ARG = 'order_id';

type Ctx = ToolContext<RetailServices>;

/** The conversation whose database the call reads and writes (the workflow sends it; the workflow id otherwise). */
function conversationOf(ctx: Ctx, input: ToolInput): string {
  return input.state_key ?? ctx.workflowId;
}

/** The worker's store, when it is of the kind the run's earlier calls used; else a retryable refusal. */
function storeFor(ctx: Ctx, input: ToolInput, tool: string): RetailRecords {
  const records = ctx.services.records();
  const mismatch = storeMismatch(tool, input.store, records);
  if (mismatch) throw ctx.failRetryable(mismatch, RETAIL_STORE_MISMATCH);
  return records;
}

function refusal(err: unknown): { ok: false; error: string } {
  if (err instanceof RetailToolError) return { ok: false, error: err.message };
  throw err; // not the reference's refusal: a bug, which the activity reports and Temporal retries
}

/** An order's owner is the principal (none yet owns nothing). */
function ownedBy(order: unknown, principal: string | undefined): boolean {
  return principal !== undefined && (order as { user_id?: unknown }).user_id === principal;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each tool has its own argument type
type AnyRetailToolSpec = RetailToolSpec<any, unknown>;

/** A retail tool, defined: its function over the database and the runtime's tool around it. */
export function defineRetailTool<Args, Result>(spec: RetailToolSpec<Args, Result>): RetailTool<Args, Result> {
  const definition = spec.kind === 'write' ? writeTool(spec) : readTool(spec);
  return { ...spec, definition };
}

function readTool(tool: AnyRetailToolSpec): ToolDefinition<RetailServices> {
  return defineTool<RetailServices, typeof tool.args>({
    name: tool.name,
    description: tool.description,
    args: tool.args,
    timeoutSeconds: 10,
    maxAttempts: 3,
    ...(tool.authenticates ? { authenticates: true } : {}),
    ...(tool.principalArg ? { principalArg: tool.principalArg } : {}),
    ...(tool.namesPerson ? { namesPerson: true } : {}),
    ...(tool.endsRun ? { endsRun: tool.endsRun } : {}),
    async handler(args, ctx: Ctx, input) {
      const records = storeFor(ctx, input, tool.name);
      const done = await records.read(conversationOf(ctx, input), (db) => {
        try {
          const result: unknown = tool.handler(db, args);
          if (tool.namesPerson && !ownedBy(result, input.principal))
            return { ok: false as const, error: NOT_PRINCIPALS };
          return { ok: true as const, result };
        } catch (err) {
          return refusal(err);
        }
      });
      return fromStore(
        records,
        done.ok ? ctx.envelope(RETAIL_SOURCE, true, done.result) : ctx.envelope(RETAIL_SOURCE, false, done),
      );
    },
  });
}

function writeTool(tool: AnyRetailToolSpec): ToolDefinition<RetailServices> {
  const onOrder = Object.hasOwn((tool.args as unknown as { shape: object }).shape, ORDER_WRITES_ARG);
  return defineTool<RetailServices, typeof tool.args>({
    name: tool.name,
    description: tool.description,
    args: tool.args,
    timeoutSeconds: 30,
    // Safe to retry: every attempt looks its key up before it writes.
    maxAttempts: 5,
    effectful: true,
    outcomeByOk: true,
    needsConsent: true,
    ...(onOrder ? { ownedArg: ORDER_WRITES_ARG } : { principalArg: 'user_id' }),
    async owner(args, { services }) {
      const orderId = args[ORDER_WRITES_ARG];
      if (typeof orderId !== 'string') return null;
      return await services.records().read('', (db) => db.orders[orderId]?.user_id ?? null);
    },
    async reconcile(input, { services }): Promise<ReconcileOutput> {
      const records = services.records();
      // Another kind of store has no record of the key and would settle it as not made.
      const mismatch = storeMismatch(`reconcile_${tool.name}`, input.store, records);
      if (mismatch) throw Object.assign(new Error(mismatch), { name: RETAIL_STORE_MISMATCH });
      const found = await records.reconcile(input.idempotency_key, '', tool.name, input.settle);
      return reconciled(found);
    },
    async handler(args, ctx: Ctx, input): Promise<Observation> {
      const records = storeFor(ctx, input, tool.name);
      // Object-level authorisation at the tool as well as in the workflow's gate.
      if (onOrder) {
        const owner = await records.read(
          conversationOf(ctx, input),
          (db) => db.orders[String(args[ORDER_WRITES_ARG])]?.user_id,
        );
        if (owner !== undefined && owner !== input.principal)
          return fromStore(
            records,
            ctx.envelope(RETAIL_SOURCE, false, { rejected: 'not_principal', order_id: args[ORDER_WRITES_ARG] }),
          );
      }
      let stage = 'checking the run';
      const stopHeartbeats = ctx.startHeartbeats(() => ({ key: input.idempotency_key, stage }));
      // Drills and tests: the first attempt hangs here (no heartbeats), as a dying worker would.
      const stall = async (ms: number) => {
        if (ms <= 0 || ctx.attempt !== 1) return;
        stopHeartbeats();
        await ctx.stall(ms);
      };
      try {
        await stall(ctx.faults.pauseBeforeCommitMs);
        ctx.throwIfCancelled();
        // Never once the run's cancel is recorded: the workflow then settles the key as not made.
        if (await ctx.runCancelRequested())
          throw ctx.failForGood(`${tool.name} not applied: the run's cancel is recorded`, 'RunCancelledBeforeCommit');
        const { record, reconciled } = await records.write(
          conversationOf(ctx, input),
          input.idempotency_key,
          tool.name,
          (db) => {
            try {
              return { ok: true, result: tool.handler(db, args) };
            } catch (err) {
              return refusal(err);
            }
          },
        );
        stage = 'committed';
        await stall(ctx.faults.pauseAfterCommitMs);
        return fromStore(records, observationOf(ctx, record, reconciled));
      } finally {
        stopHeartbeats();
      }
    },
  });
}

function observationOf(ctx: Ctx, record: WriteRecord, reconciled: boolean): Observation {
  if (record.state === 'applied') return ctx.envelope(RETAIL_SOURCE, true, record.result);
  if (record.state === 'refused') return ctx.envelope(RETAIL_SOURCE, false, { error: record.error });
  // The run's lookup settled this key as never made before this attempt got to it.
  return ctx.envelope(RETAIL_SOURCE, false, { rejected: 'settled_not_made', reconciled });
}

function reconciled(found: WriteRecord | undefined): ReconcileOutput {
  if (!found) return { state: 'ambiguous', detail: 'no record of the key yet' };
  if (found.state === 'applied') return { state: 'confirmed' };
  if (found.state === 'refused') return { state: 'rejected', detail: found.error };
  return { state: 'not_made' };
}
