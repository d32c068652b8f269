// The lines `agent chat` reads, and which of them may answer which wait. Lines typed ahead wait
// here, in order, and go out at the run's next wait for the customer, except at a consent question:
// only a line entered after the question was shown answers it. One typed earlier (a "yes" to
// something else) is dropped, and the customer is told so in one line. Leaving (`/end`) is no
// consent: it goes out at any wait.

export const END_COMMAND = '/end';

/** A line as the customer entered it, with the last turn the chat had shown them then. */
export interface TypedLine {
  text: string;
  shown: number;
}

/** The wait the run is in: `question` is the consent question's turn number, when it asks for one. */
export interface CustomerWait {
  question?: number;
}

export type NextLine = { send: TypedLine } | { dropped: TypedLine } | undefined;

export class ChatLines {
  private readonly lines: TypedLine[] = [];

  /** A line the customer entered while the chat had shown turns up to `shown`. */
  push(text: string, shown: number): void {
    this.lines.push({ text, shown });
  }

  get size(): number {
    return this.lines.length;
  }

  /** The next line for this wait: to send, or dropped because it was entered before the question. */
  next(wait: CustomerWait): NextLine {
    const line = this.lines.shift();
    if (line === undefined) return undefined;
    const leaving = line.text.trim() === END_COMMAND;
    if (wait.question !== undefined && line.shown < wait.question && !leaving) return { dropped: line };
    return { send: line };
  }
}
