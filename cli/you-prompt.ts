// The `you: ` prompt `agent chat` shows on a terminal while the run waits for the customer. It is
// written once per wait, without a newline: the terminal echoes the line typed after it, and the
// Enter ends that line. Anything the chat prints before the customer typed starts a fresh line.
import type { Writable } from './cli-context';

export const YOU_PROMPT = 'you: ';

export class YouPrompt {
  private showing = false;

  constructor(
    private readonly terminal: boolean,
    private readonly out: Writable,
  ) {}

  /** Shows the prompt (on a terminal), unless it is showing already. */
  show(): void {
    if (!this.terminal || this.showing) return;
    this.out.write(YOU_PROMPT);
    this.showing = true;
  }

  /** The customer entered a line: the terminal's echo ended the prompt's line. */
  answered(): void {
    this.showing = false;
  }

  /** Something else is about to be printed: end the prompt's line first. */
  interrupt(): void {
    if (!this.showing) return;
    this.out.write('\n');
    this.showing = false;
  }
}
