// The history entry whom a run acts for was learnt from: the first successful result of an
// authenticating tool that named that principal (the loop takes the first one only). A later
// authentication that named someone else (another customer looked up) is not it: the model is told
// whom the run acts for on this entry alone, and continue-as-new always carries it.
import type { HistoryEntry } from '../types';

/** The names of the tools whose successful result authenticates the customer (the run's: MCP servers' too). */
export function authenticatingTools(tools: readonly { name: string; authenticates?: boolean }[]): string[] {
  return tools.filter((tool) => tool.authenticates === true).map((tool) => tool.name);
}

/** The entry the run's principal came from; undefined when none in `history` (or no principal learnt). */
export function authenticationEntry(
  history: readonly HistoryEntry[],
  principal: string | undefined,
  authenticates: readonly string[],
): HistoryEntry | undefined {
  if (principal === undefined) return undefined;
  return history.find(
    (e) =>
      e.action.kind === 'tool' &&
      authenticates.includes(e.action.name) &&
      e.observation.ok &&
      e.observation.data === principal,
  );
}
