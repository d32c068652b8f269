// The operator's inbox: the kinds of wait a run can be in (the AgentWaiting search attribute),
// the command that answers each, and the visibility query `agent list --waiting` runs.

/** AgentWaiting values; `none`: the run waits for nobody (or has ended). */
export const WAIT_KINDS = ['approval', 'escalation', 'customer', 'consent', 'topup', 'none'] as const;
export type WaitKind = (typeof WAIT_KINDS)[number];

/** The kinds a person answers (every kind but `none`). */
export const PERSON_WAIT_KINDS: readonly WaitKind[] = WAIT_KINDS.filter((k) => k !== 'none');

/** What an operator types next for a run waiting in `kind` (the CLI's real commands). */
export function nextCommand(kind: WaitKind, workflowId: string): string {
  switch (kind) {
    case 'approval':
      return `agent approve ${workflowId} | agent reject ${workflowId}`;
    case 'escalation':
      return `agent answer ${workflowId} TEXT`;
    case 'customer':
      return `agent say ${workflowId} TEXT`;
    case 'consent':
      return `agent say ${workflowId} yes`;
    case 'topup':
      return `agent extend ${workflowId} --reason TEXT`;
    case 'none':
      return '-';
  }
}

export type WaitingKinds = { ok: true; kinds: WaitKind[] } | { ok: false; error: string };

/**
 * `--waiting [KIND,...]`: empty means every kind but `none`. An unknown kind is a one-line error
 * listing the kinds; the value is untrusted, so it is quoted bounded and never reaches a query raw.
 */
export function parseWaitingKinds(raw: string | undefined): WaitingKinds {
  const parts = (raw ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p.length > 0);
  if (parts.length === 0) return { ok: true, kinds: [...PERSON_WAIT_KINDS] };
  const kinds: WaitKind[] = [];
  for (const part of parts) {
    const kind = WAIT_KINDS.find((k) => k === part.toLowerCase());
    if (!kind) return { ok: false, error: `unknown --waiting kind ${shown(part)}: use ${WAIT_KINDS.join(', ')}` };
    if (!kinds.includes(kind)) kinds.push(kind);
  }
  return { ok: true, kinds };
}

/** The visibility query for runs waiting in one of `kinds` (only known kinds reach it). */
export function waitingQuery(kinds: readonly WaitKind[]): string {
  const known = kinds.filter((k) => (WAIT_KINDS as readonly string[]).includes(k));
  return known.length === 1
    ? `AgentWaiting = "${known[0]}"`
    : `AgentWaiting IN (${known.map((k) => `"${k}"`).join(', ')})`;
}

/** An untrusted value in an error message: printable ASCII only, at most 40 characters. */
function shown(value: string): string {
  const printable = JSON.stringify(value.replace(/[^\x20-\x7e]/g, '?'));
  return printable.length <= 42 ? printable : `${printable.slice(0, 40)}…"`;
}
