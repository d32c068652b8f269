// Which step of the loop an activity belongs to, carried in the activity's own input. The history
// keeps every activity's input, so `agent trace` (client/history/trace.ts) reads the step from
// there, recorded by the workflow, instead of parsing activity ids.

export type StepRole = 'decide' | 'tool' | 'reconcile' | 'owner';

export interface StepTag {
  step: number;
  role: StepRole;
}

/** An activity input as the loop schedules it: the activity's own fields and the step tag. */
export type Tagged<T> = T & { trace: StepTag };

const ROLES: readonly string[] = ['decide', 'tool', 'reconcile', 'owner'] satisfies StepRole[];

/** The tag of a decoded activity input; undefined for inputs recorded before the loop tagged them. */
export function stepTagOf(input: unknown): StepTag | undefined {
  const tag = (input as { trace?: unknown } | null | undefined)?.trace as Partial<StepTag> | undefined;
  if (typeof tag !== 'object' || tag === null) return undefined;
  if (!Number.isSafeInteger(tag.step) || typeof tag.role !== 'string' || !ROLES.includes(tag.role)) return undefined;
  return { step: tag.step!, role: tag.role as StepRole };
}
