// The worker's workflowsPath: every workflow type the task queue serves.
export { reactAgent } from './agent';
export { llmLimiter } from './llm-limiter';
