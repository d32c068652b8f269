/** The Python exception a reference tool raises; tau2 shows the agent `str(exception)`. */
export type PythonErrorType =
  | 'ValueError'
  | 'IndexError'
  | 'TypeError'
  | 'ZeroDivisionError'
  | 'OverflowError'
  | 'SyntaxError'
  | 'RecursionError'
  | 'MemoryError';

/**
 * A tool's refusal, with the reference's message (`Order not found`, `Non-pending order cannot be cancelled`,
 * …): the ValueError the reference raises, or for `calculate` the exception Python's eval raised.
 */
export class RetailToolError extends Error {
  override readonly name = 'RetailToolError';
  constructor(
    message: string,
    readonly pythonType: PythonErrorType = 'ValueError',
  ) {
    super(message);
  }
}
