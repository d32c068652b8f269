// One log line per tool result, for operators reading worker logs: the same view the model gets,
// so fields a tool marks as sensitive are redacted here too.
import { log } from '@temporalio/activity';
import { observationForModel } from '../../common/model-view/decision-payload';
import type { Observation, ToolInput } from '../../common/types';
import { ALL_TOOLS } from '../../domains/index';
import type { ToolFn } from './tool-activity';

export function withObservationLog<T extends Record<string, ToolFn>>(tools: T): T {
  const wrapped: Record<string, ToolFn> = {};
  for (const [name, tool] of Object.entries(tools)) {
    // A named function expression keeps the activity's registered name and stack traces readable.
    wrapped[name] = {
      [name]: async (input: ToolInput): Promise<Observation> => {
        const observation = await tool(input);
        logObservation(name, observation);
        return observation;
      },
    }[name]!;
  }
  return wrapped as T;
}

/** The log line of one tool result, as the model sees it (what its tool or its envelope marks sensitive redacted). */
export function logObservation(name: string, observation: Observation): void {
  const view = observationForModel(observation, ALL_TOOLS);
  log.info(`tool observation: ${name}`, {
    source: view.source,
    ok: view.ok,
    bytes: view.bytes,
    truncated: view.truncated,
    data: JSON.stringify(view.data),
    ...(view.redacted ? { redacted: view.redacted.join(',') } : {}),
  });
}
