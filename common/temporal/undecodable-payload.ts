// What a worker's codec hands on instead of a payload it cannot decrypt (an unknown key id, bytes
// that fail authentication). Throwing from the codec fails the whole workflow task before any
// handler runs, so one bad Update from any client of the namespace would wedge its run. This
// marker carries no data, and no payload converter reads its encoding: an Update carrying one is
// rejected by the SDK before it is accepted (nothing enters the history), while the same marker in
// a history payload (an input, an activity result, a typed Signal) still fails the workflow task,
// so a worker that lacks a key never acts on it and a worker that has the key takes the task.
import { str, u8 } from '@temporalio/common';
import type { Payload } from '@temporalio/common';

export const UNDECODABLE_ENCODING = 'binary/undecodable';
export const UNDECODABLE_REASON_METADATA = 'undecodable-reason';

/** The marker for a payload this process cannot decode, and the one-line reason why. */
export function undecodablePayload(reason: string): Payload {
  return {
    metadata: { encoding: u8(UNDECODABLE_ENCODING), [UNDECODABLE_REASON_METADATA]: u8(reason) },
    data: new Uint8Array(),
  };
}

/** The codec's reason when `payload` is the marker, else undefined. */
export function undecodableReason(payload: Payload): string | undefined {
  const encoding = payload.metadata?.encoding;
  if (!encoding || str(encoding) !== UNDECODABLE_ENCODING) return undefined;
  const reason = payload.metadata?.[UNDECODABLE_REASON_METADATA];
  return reason ? str(reason) : 'the codec could not decode it';
}
