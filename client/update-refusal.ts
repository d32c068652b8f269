// The one line a client shows when a run refuses an Update (say, approval, extend). A payload the
// worker could not decrypt reaches the workflow as the codec's marker, and the SDK's refusal then
// names only its encoding: say what it means and where to look instead.
import type { WorkflowUpdateFailedError } from '@temporalio/client';
import { UNDECODABLE_ENCODING } from '../common/temporal/undecodable-payload';

export function updateRefusal(err: WorkflowUpdateFailedError): string {
  const message = (err.cause as Error | undefined)?.message ?? err.message;
  if (!message.includes(UNDECODABLE_ENCODING)) return message;
  return "the worker cannot decrypt it: it lacks the key this client encrypts with (AGENT_CODEC_ACTIVE_KEY_ID; the worker's log names the key id)";
}
