// "Every material final claim maps to an observation" (the guide), made mechanical: the material
// claims of an answer are its numbers (amounts, days, ids) and its identifiers (plan and policy
// names such as pro_monthly, refund-v3). Each must appear in an observation of this run, or in the
// run's own input (the goal and the principal), which the runtime trusts.
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
  const evidence = [
    record.input.goal,
    record.input.principal,
    ...record.calls.filter((c) => c.observation).map((c) => JSON.stringify(c.observation!.data)),
  ].join('\n');
  const numbers = new Set((evidence.match(NUMBER) ?? []).map((n) => String(Number(n.replace(',', '.')))));
  const text = evidence.toLowerCase();
  return materialClaims(answer).filter((claim) => (/^\d/.test(claim) ? !numbers.has(claim) : !text.includes(claim)));
}
