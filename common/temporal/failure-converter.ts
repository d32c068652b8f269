// With encryption on, failure messages and stack traces are encoded too (an LLM error body or a
// tool error can quote personal data). Loaded by path: the worker also bundles it into workflow code,
// so it may import only @temporalio/common.
import { DefaultFailureConverter } from '@temporalio/common';

export const failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
