// Where Temporal is and which task queue the agent uses, from the environment. Shared by the
// worker, the CLI, the demo and the tests so they always agree.

export interface TemporalEnv {
  address: string;
  namespace: string;
  taskQueue: string;
  /** Base URL of the Temporal Web UI, for links to runs. */
  uiUrl: string;
}

export const DEFAULT_TASK_QUEUE = 'react-agent';

export function temporalEnv(env: NodeJS.ProcessEnv = process.env): TemporalEnv {
  return {
    address: env.TEMPORAL_ADDRESS || 'localhost:7233',
    namespace: env.TEMPORAL_NAMESPACE || 'default',
    taskQueue: env.TEMPORAL_TASK_QUEUE || DEFAULT_TASK_QUEUE,
    uiUrl: (env.TEMPORAL_UI_URL || 'http://localhost:8233').replace(/\/+$/, ''),
  };
}

export function runUrl(env: TemporalEnv, workflowId: string): string {
  return `${env.uiUrl}/namespaces/${encodeURIComponent(env.namespace)}/workflows/${encodeURIComponent(workflowId)}`;
}
