// "Every material final claim maps to an observation" (the guide), made mechanical: the material
// claims of an answer are its numbers (amounts, days, ids) and its identifiers (plan and policy
// names such as pro_monthly, refund-v3). Each must appear in an observation of this run, or in the
// run's own input (the goal and the principal), which the runtime trusts. The runtime's final
// validator reads figures this plain reading misses (number words, full-width and other scripts'
// digits): its unsupported figures count too, against the same evidence.
import { checkFinalAnswer } from '../common/validator/final-validator';
import type { Observation } from '../common/tools/observation';
import type { RunRecord } from './run-record';

const NUMBER = /\d+(?:[.,]\d+)?/g;
const IDENTIFIER = /\b[a-z]+(?:[_-][a-z0-9]+)+\b/g;

export function materialClaims(answer: string): string[] {
  const numbers = (answer.match(NUMBER) ?? []).map((n) => String(Number(n.replace(',', '.'))));
  const ids = answer.toLowerCase().match(IDENTIFIER) ?? [];
  return [...new Set([...numbers, ...ids])];
}

/** The claims of `answer` that no observation (nor the run's input) states. */
export function unsupportedClaims(answer: string, record: Pick<RunRecord, 'calls' | 'input'>): string[] {
  const observations = record.calls.flatMap((c) => (c.observation ? [c.observation] : []));
  const evidence = [record.input.goal, record.input.principal, ...observations.map((o) => JSON.stringify(o.data))].join(
    '\n',
  );
  const numbers = new Set((evidence.match(NUMBER) ?? []).map((n) => String(Number(n.replace(',', '.')))));
  const text = evidence.toLowerCase();
  const plain = materialClaims(answer).filter((claim) =>
    /^\d/.test(claim) ? !numbers.has(claim) : !text.includes(claim),
  );
  const figures = checkFinalAnswer(answer, [inputObservation(record.input), ...observations]).unsupported.map(
    (c) => c.text,
  );
  return [...new Set([...plain, ...figures])];
}

/** The run's input as evidence: the runtime trusts its goal and principal. */
function inputObservation(input: RunRecord['input']): Observation {
  const data = { goal: input.goal, principal: input.principal ?? null };
  return { tool: 'run_input', ok: true, data, source: 'run input', bytes: 0, truncated: false };
}
