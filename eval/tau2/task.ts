// A τ²-bench task file (tasks.json of a domain), as τ²'s Task model reads it: the customer's scenario
// and the ground-truth actions whose end state is the expected one. Fields the suite does not use
// are accepted and ignored (pydantic's default); a file the suite cannot run is refused with one
// line naming the file, the task and the field.
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { retailToolsByName } from '../../domains/retail/tools/index';

const structuredInstructions = z.object({
  domain: z.string(),
  reason_for_call: z.string().min(1),
  known_info: z.string().nullish(),
  unknown_info: z.string().nullish(),
  task_instructions: z.string(),
});

const goldAction = z.object({
  action_id: z.string(),
  /** Actions of the user (user tools) exist in other domains; a retail agent performs them all. */
  requestor: z.literal('assistant', { error: 'only assistant actions can be replayed in retail' }).default('assistant'),
  name: z.string().refine((name) => retailToolsByName.has(name), { error: 'not a retail tool' }),
  arguments: z.record(z.string(), z.unknown()),
  info: z.string().nullish(),
  compare_args: z.array(z.string()).nullish(),
});
export type GoldAction = z.output<typeof goldAction>;

export const tau2TaskSchema = z.object({
  id: z.string().min(1),
  description: z.unknown().optional(),
  user_scenario: z.object({
    persona: z.string().nullish(),
    instructions: z.union([structuredInstructions, z.string().min(1)]),
  }),
  ticket: z.string().nullish(),
  // Every task of the retail domain starts from db.json; a task that changes it first cannot be replayed here.
  initial_state: z
    .null({ error: 'tasks with an initial_state are not supported (each task starts from db.json)' })
    .nullish(),
  evaluation_criteria: z
    .object({
      actions: z.array(goldAction).nullish(),
      communicate_info: z.array(z.string()).nullish(),
      nl_assertions: z.array(z.string()).nullish(),
      reward_basis: z.array(z.string()).nullish(),
    })
    .nullish(),
});
export type Tau2Task = z.output<typeof tau2TaskSchema>;

export class TaskFileError extends Error {
  override name = 'TaskFileError';
}

/** The ground-truth actions of a task (none when it has no evaluation criteria). */
export function goldActions(task: Tau2Task): GoldAction[] {
  return task.evaluation_criteria?.actions ?? [];
}

/** What the customer opens the conversation with. */
export function reasonForCall(task: Tau2Task): string {
  const { instructions } = task.user_scenario;
  return typeof instructions === 'string' ? instructions : instructions.reason_for_call;
}

/** The customer's instructions as τ²'s user simulator reads them (the live mode's customer). */
export function customerInstructions(task: Tau2Task): string {
  const { instructions, persona } = task.user_scenario;
  if (typeof instructions === 'string') return instructions;
  return [
    persona ? `Persona: ${persona}` : undefined,
    `Domain: ${instructions.domain}`,
    `Reason for call: ${instructions.reason_for_call}`,
    instructions.known_info ? `Known info: ${instructions.known_info}` : undefined,
    instructions.unknown_info ? `Unknown info: ${instructions.unknown_info}` : undefined,
    `Task instructions: ${instructions.task_instructions}`,
  ]
    .filter((line) => line !== undefined)
    .join('\n');
}

/** Parses a task file's JSON (a list of tasks); throws TaskFileError with one line. */
export function parseTasks(file: string, text: string): Tau2Task[] {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new TaskFileError(`${file}: not valid JSON: ${(err as Error).message.split('\n')[0]}`);
  }
  if (!Array.isArray(raw)) throw new TaskFileError(`${file}: expected a JSON list of τ² tasks`);
  if (raw.length === 0) throw new TaskFileError(`${file}: the list of tasks is empty`);
  const tasks: Tau2Task[] = [];
  const ids = new Set<string>();
  raw.forEach((entry: unknown, index) => {
    const parsed = tau2TaskSchema.safeParse(entry);
    const id = typeof (entry as { id?: unknown } | null)?.id === 'string' ? (entry as { id: string }).id : undefined;
    const which = id !== undefined ? `task ${id}` : `task at index ${index}`;
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      const where = issue.path.length > 0 ? `${issue.path.map(String).join('.')}: ` : '';
      throw new TaskFileError(`${file}: ${which}: ${where}${issue.message.replace(/\s+/g, ' ').slice(0, 200)}`);
    }
    if (ids.has(parsed.data.id)) throw new TaskFileError(`${file}: ${which}: the id is used by another task`);
    ids.add(parsed.data.id);
    tasks.push(parsed.data);
  });
  return tasks;
}

/** The tasks of a file, all or the ones named (an unknown id is an error). */
export function loadTasks(file: string, only: readonly string[] = []): Tau2Task[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new TaskFileError(`${file}: cannot read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const tasks = parseTasks(file, text);
  if (only.length === 0) return tasks;
  const known = new Set(tasks.map((t) => t.id));
  const missing = only.filter((id) => !known.has(id));
  if (missing.length) throw new TaskFileError(`${file}: no task with id ${missing.join(', ')}`);
  return tasks.filter((t) => only.includes(t.id));
}
