// The worker's workflowsPath: every workflow type the task queue serves.
export { reactAgent } from './agent/agent';
export { llmLimiter } from './limiter/llm-limiter';
