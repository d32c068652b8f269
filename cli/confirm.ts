// Asks an operator to confirm a destructive batch. Only a terminal can answer: when stdin is not
// a TTY (CI, a pipe, a cron job) nobody is there to type, so the caller must refuse rather than
// wait forever or read a stray line from a pipe.
import readline from 'node:readline';
import type { Writable } from './cli-context';

export interface Stdin extends NodeJS.ReadableStream {
  isTTY?: boolean;
}

export function canConfirm(stdin: Stdin): boolean {
  return stdin.isTTY === true;
}

/** True only for "y" or "yes" (any case). End of input counts as no. */
export async function confirm(question: string, stdin: Stdin, out: Writable): Promise<boolean> {
  const rl = readline.createInterface({ input: stdin, terminal: false });
  out.write(question);
  try {
    const answer = await new Promise<string | undefined>((resolve) => {
      rl.once('line', (text) => resolve(text));
      rl.once('close', () => resolve(undefined));
    });
    return answer !== undefined && /^(y|yes)$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}
