// Reads repeated with nothing new in between. Models re-read and double-check: a read made again
// after the customer wrote or after a write is an ordinary call (the world may have changed); the
// same read again with no news is answered from its earlier observation, marked as a repeat, without
// running the tool, up to the run's budget.max_repeats; past it the gateway ends the run
// loop_detected. Pure and deterministic.
import type { ToolAction } from '../../common/contract';
import type { HistoryEntry, ReadScope, TraceEntry } from '../../common/types';
import type { AdmittedCall } from './step';

/** Repeats of one read with nothing new in between, when the run's input sets none. */
export const DEFAULT_MAX_REPEATS = 2;

/** Read signatures a run carries into the next (one scope's; older ones would only make a repeat a new call). */
export const MAX_CARRIED_READS = 1_000;

/**
 * What "nothing new" means: the customer messages the model had seen when it decided, and the
 * writes the run made. Either changing starts a new scope.
 */
export function readScopeKey(customerMessages: number, writes: number): string {
  return `${customerMessages}/${writes}`;
}

/** The reads of the current scope: the remembered ones if the scope is still the same, none otherwise. */
export function readsIn(remembered: ReadScope | undefined, scope: string): readonly string[] {
  return remembered?.scope === scope ? remembered.calls : [];
}

/**
 * The reads as the model could see them: a read whose latest result its view showed compacted is
 * dropped (all its repeats with it), so calling it again, as the compaction note says, is a new
 * call that runs the tool, not a repeat answered from memory (which would be compacted again).
 */
export function readsShown(
  reads: readonly string[],
  history: readonly HistoryEntry[],
  compacted: (entry: HistoryEntry) => boolean,
  signatureOf: (name: string, args: Record<string, unknown>) => string,
): readonly string[] {
  if (reads.length === 0) return reads;
  const latest = new Map<string, HistoryEntry>();
  for (const h of history)
    if (h.action.kind === 'tool' && h.observation.tool === h.action.name)
      latest.set(signatureOf(h.action.name, h.action.args), h);
  return reads.filter((signature) => {
    const entry = latest.get(signature);
    return entry === undefined || !compacted(entry);
  });
}

/**
 * The calls never to be made again, as of a decision: the writes made since the customer's message
 * number `since`. A customer message after them starts afresh: asking for the same change again
 * (A → B → A) is their new request, asked again for consent, not a loop; the same write again with
 * nothing new in between still is. The yes that consents to a write is no new message: the loop
 * moves `since` past it when the write is made. Undefined `since`: the run's first decision.
 */
export function writesIn(
  seenCalls: readonly string[],
  since: number | undefined,
  customerMessages: number,
): { calls: string[]; since: number } {
  if (since === undefined) return { calls: [...seenCalls], since: customerMessages };
  return customerMessages > since ? { calls: [], since: customerMessages } : { calls: [...seenCalls], since };
}

/**
 * The answer to a repeated read: the latest observation of the same call (same signature) in the
 * history, again, marked as a repeat in the model's view and the trace. undefined: the history no
 * longer holds it (a long run's carried tail): the call is then made as a new one.
 */
export function repeatAnswer(
  call: AdmittedCall,
  repeat: number,
  maxRepeats: number,
  history: readonly HistoryEntry[],
  signatureOf: (name: string, args: Record<string, unknown>) => string,
): { trace: TraceEntry; history: HistoryEntry } | undefined {
  const earlier = [...history]
    .reverse()
    .find(
      (h) =>
        h.action.kind === 'tool' &&
        h.action.name === call.name &&
        h.observation.tool === call.name &&
        signatureOf(h.action.name, h.action.args) === call.signature,
    );
  if (!earlier) return undefined;
  const ofStep = earlier.observation.repeat?.of_step ?? earlier.step;
  const left = maxRepeats - repeat;
  const note =
    `You already made this exact call at step ${ofStep} and nothing has changed since (no customer message, no write): ` +
    `this is the same result again, the tool was not called. ` +
    (left > 0
      ? `The run ends loop_detected if you repeat it more than ${left} more time${left === 1 ? '' : 's'} with nothing new.`
      : 'Repeating it once more with nothing new ends the run loop_detected.');
  const action: ToolAction = { kind: 'tool', name: call.name, args: call.args };
  return {
    trace: { step: call.step, tool: call.name, args_hash: call.argsHash, ok: true, repeat_of: ofStep },
    history: {
      step: call.step,
      action,
      observation: { ...earlier.observation, repeat: { of_step: ofStep, note } },
      ...(earlier.observed_at_ms !== undefined ? { observed_at_ms: earlier.observed_at_ms } : {}),
    },
  };
}
