// A scenario's expected facts (expect.answer_facts) against the answer a run returned. A fact is found
// where it stands as whole tokens: "49.00" is in "Refunded $49.00." and "USD49.00", but not in
// "149.00", "49.001" or "1,249.00"; "refund" is not in "refunded". Case and runs of white space do
// not matter. A number is text here: "49" is not in "49.00".

/** The facts `answer` does not state, in the order given. */
export function missingFacts(answer: string, facts: readonly string[]): string[] {
  const text = normalise(answer);
  return facts.filter((fact) => !statesFact(text, normalise(fact)));
}

function statesFact(text: string, fact: string): boolean {
  if (fact.length === 0) return true;
  for (let at = text.indexOf(fact); at >= 0; at = text.indexOf(fact, at + 1)) {
    const end = at + fact.length;
    if (!joined(fact[0]!, text[at - 1], text[at - 2]) && !joined(fact[fact.length - 1]!, text[end], text[end + 1]))
      return true;
  }
  return false;
}

type CharClass = 'digit' | 'letter' | 'other';

function classOf(c: string | undefined): CharClass {
  if (c === undefined) return 'other';
  if (/\p{N}/u.test(c)) return 'digit';
  return /[\p{L}\p{M}_]/u.test(c) ? 'letter' : 'other';
}

/**
 * Whether the fact's edge character runs on into its neighbour: a letter into a letter, a digit into
 * a digit, or a digit into a decimal or thousands part ("49" then ".5", "1," then "249").
 */
function joined(edge: string, neighbour: string | undefined, beyond: string | undefined): boolean {
  const kind = classOf(edge);
  if (kind === 'other') return false;
  if (classOf(neighbour) === kind) return true;
  return kind === 'digit' && (neighbour === '.' || neighbour === ',') && classOf(beyond) === 'digit';
}

function normalise(text: string): string {
  return text.toLowerCase().replace(/\s+/g, ' ').trim();
}
