// The gRPC retries of every Client connection (the CLI's, the client API's, the rate limiter's
// activities'): the SDK's own, except for one answer. A run that continues as new
// refuses an Update or a signal with RESOURCE_EXHAUSTED "workflow is closing" (or aborts one it had
// admitted), and its successor exists when that answer is sent. The SDK backs off 1 s, then up to
// 5 s, for every RESOURCE_EXHAUSTED: ten attempts, about 40 s, before the caller hears of it. Here
// that answer is retried after tens of milliseconds and given up after about 3 s, so a request to
// the chain lands on the next run at once and one pinned to the closed run fails fast.
import { defaultGrpcRetryOptions, makeGrpcRetryInterceptor, WorkflowNotFoundError } from '@temporalio/client';
import type { GrpcRetryOptions } from '@temporalio/client';
import { google, temporal } from '@temporalio/proto';

// The gRPC types as the SDK names them (@grpc/grpc-js is the SDK's dependency, not ours).
type StatusObject = Parameters<GrpcRetryOptions['delayFunction']>[1];
type Metadata = NonNullable<StatusObject['metadata']>;
type Interceptor = ReturnType<typeof makeGrpcRetryInterceptor>;

const GRPC_NOT_FOUND = 5;
const GRPC_RESOURCE_EXHAUSTED = 8;

const CLOSING = /workflow is closing/;
const MULTI_OPERATION_FAILURE = 'type.googleapis.com/temporal.api.errordetails.v1.MultiOperationExecutionFailure';

/**
 * The server's answer for a run that is closing (service/history/consts ErrWorkflowClosing). An
 * update-with-start (the rate limiter's lease) gets it wrapped: "Update-with-Start could not be
 * executed", with the operation's own status in the error's details.
 */
export function isRunClosing(status: Pick<StatusObject, 'code' | 'details'> & { metadata?: Metadata }): boolean {
  if (status.code !== GRPC_RESOURCE_EXHAUSTED) return false;
  return (
    CLOSING.test(status.details) || operationStatuses(status.metadata).some((op) => CLOSING.test(op.message ?? ''))
  );
}

/** The per-operation statuses of a multi-operation failure (none for any other answer). */
function operationStatuses(metadata: Metadata | undefined): Array<{ message?: string | null }> {
  const bin = metadata?.get('grpc-status-details-bin')[0];
  if (!bin || typeof bin === 'string') return [];
  try {
    return google.rpc.Status.decode(bin).details.flatMap((any) =>
      any.type_url === MULTI_OPERATION_FAILURE && any.value
        ? temporal.api.errordetails.v1.MultiOperationExecutionFailure.decode(any.value).statuses
        : [],
    );
  } catch {
    return []; // undecodable details: not a closing run we can recognise
  }
}

const CLOSING_FIRST_DELAY_MS = 50;
const CLOSING_MAX_DELAY_MS = 500;

/**
 * The SDK's retry options, with short delays for a closing run. Written out: the SDK's
 * defaultGrpcRetryOptions ignores a maxIntervalMs given to it (1.24.0), so it cannot cap them.
 */
export function closingAwareRetryOptions(): GrpcRetryOptions {
  const sdk = defaultGrpcRetryOptions();
  return {
    delayFunction: (attempt, status) =>
      isRunClosing(status)
        ? Math.min(CLOSING_MAX_DELAY_MS, CLOSING_FIRST_DELAY_MS * 1.7 ** (attempt - 1)) * (0.8 + Math.random() * 0.4)
        : sdk.delayFunction(attempt, status),
    retryableDecider: sdk.retryableDecider,
  };
}

/** The interceptors for a client Connection (not the worker's NativeConnection, which has its own). */
export function clientGrpcInterceptors(): Interceptor[] {
  return [makeGrpcRetryInterceptor(closingAwareRetryOptions())];
}

/**
 * An Update that failed because its run was closing or had closed, so it was not applied:
 * RESOURCE_EXHAUSTED ("workflow is closing", retries spent) while the run continues as new, or
 * NOT_FOUND once it has closed (the run is gone, or the server aborted the Update as it closed).
 */
export function isClosingRunError(err: unknown): boolean {
  if (err instanceof WorkflowNotFoundError) return true;
  for (let e: unknown = err, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (code === GRPC_RESOURCE_EXHAUSTED || code === GRPC_NOT_FOUND) return true;
    if (typeof code === 'number') return false;
  }
  return false;
}
