// The client's gRPC retry delays (runtime/closing-run-retry.ts): short for a run that is closing,
// the SDK's own for everything else.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { google, temporal } from '@temporalio/proto';
import { closingAwareRetryOptions, isRunClosing } from '../../runtime/closing-run-retry';

const CLOSING = { code: 8, details: 'workflow operation can not be applied because workflow is closing' };
const BUSY = { code: 8, details: 'namespace rate limit exceeded' };
const UNAVAILABLE = { code: 14, details: 'connection refused' };
const status = (s: { code: number; details: string }) => ({ ...s, metadata: undefined as never });

/** How the server answers an update-with-start: the operations' own statuses in the error's details. */
function updateWithStartFailure(operations: Array<{ code: number; message: string }>) {
  const failure = temporal.api.errordetails.v1.MultiOperationExecutionFailure.encode({ statuses: operations }).finish();
  return withDetails(
    google.rpc.Status.encode({
      code: 8,
      message: 'Update-with-Start could not be executed.',
      details: [
        { type_url: 'type.googleapis.com/temporal.api.errordetails.v1.MultiOperationExecutionFailure', value: failure },
      ],
    }).finish(),
  );
}
/** The status the retry interceptor sees, with `grpc-status-details-bin` set to `bin`. */
function withDetails(bin: Uint8Array) {
  const metadata = { get: (key: string) => (key === 'grpc-status-details-bin' ? [Buffer.from(bin)] : []) };
  return { code: 8, details: 'Update-with-Start could not be executed.', metadata: metadata as never };
}

describe('the client retry for a closing run', () => {
  it('knows the server answer for a closing run, and only that one', () => {
    assert.equal(isRunClosing(CLOSING), true);
    assert.equal(isRunClosing(BUSY), false);
    assert.equal(isRunClosing({ code: 5, details: CLOSING.details }), false);
  });

  it("knows it inside an update-with-start's failure (the rate limiter's lease), and only there", () => {
    const aborted = { code: 10, message: 'Operation was aborted.' };
    assert.equal(isRunClosing(updateWithStartFailure([{ code: 8, message: CLOSING.details }, aborted])), true);
    assert.equal(isRunClosing(updateWithStartFailure([aborted, { code: 8, message: CLOSING.details }])), true);
    assert.equal(isRunClosing(updateWithStartFailure([{ code: 8, message: BUSY.details }, aborted])), false);
    assert.equal(isRunClosing(updateWithStartFailure([])), false);
    // Whatever the details hold, the answer is a boolean, never an exception in the gRPC stack.
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (bin) => {
        assert.equal(isRunClosing(withDetails(bin)), false);
      }),
    );
  });

  it('retries a closing run within 0.5 s each time and about 3 s in all; other answers keep the SDK delays', () => {
    const options = closingAwareRetryOptions();
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 9 }), (attempt) => {
        assert.ok(options.delayFunction(attempt, status(CLOSING)) <= 600, 'closing: at most 0.5 s plus jitter');
        // The SDK's: 1 s base for RESOURCE_EXHAUSTED, 100 ms for the rest, times 1.7^attempt, at most 5 s.
        const busy = options.delayFunction(attempt, status(BUSY));
        assert.ok(busy >= Math.min(5_000, 1.7 ** attempt * 1_000) * 0.8 - 1, `busy ${busy}`);
        const unavailable = options.delayFunction(attempt, status(UNAVAILABLE));
        assert.ok(unavailable >= Math.min(5_000, 1.7 ** attempt * 100) * 0.8 - 1, `unavailable ${unavailable}`);
        assert.equal(options.retryableDecider(attempt, status(CLOSING)), true);
      }),
    );
    let total = 0;
    for (let attempt = 1; options.retryableDecider(attempt, status(CLOSING)); attempt++)
      total += options.delayFunction(attempt, status(CLOSING));
    assert.ok(total < 4_000, `${total} ms of retries on a closing run`);
    assert.equal(options.retryableDecider(1, status({ code: 3, details: 'bad' })), false);
  });
});
