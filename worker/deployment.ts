// The worker's Worker Deployment Version (Temporal's worker versioning): with AGENT_WORKER_VERSIONING=1
// the worker polls as version {deployment, build id}, and every run it starts stays on that version
// (PINNED) until it ends, so a run never replays its history on code it did not start on. Rolling a
// version out and back is the `temporal worker deployment` CLI's job (docs/development.md).
import type { NativeConnection, WorkerDeploymentOptions } from '@temporalio/worker';
import { readEnv } from '../runtime/env-vars';
import { buildIdFromEnv } from './build-id';

export interface AgentDeployment {
  deploymentName: string;
  buildId: string;
}

/** The version this worker is, or undefined when versioning is off (the default). */
export function deploymentFromEnv(env: NodeJS.ProcessEnv = process.env): AgentDeployment | undefined {
  if (!readEnv('AGENT_WORKER_VERSIONING', env)) return undefined;
  return { deploymentName: readEnv('AGENT_DEPLOYMENT_NAME', env), buildId: buildIdFromEnv(env) };
}

export function workerDeploymentOptions(deployment: AgentDeployment): WorkerDeploymentOptions {
  return { version: deployment, useWorkerVersioning: true, defaultVersioningBehavior: 'PINNED' };
}

export function describeDeployment(deployment: AgentDeployment | undefined): string {
  return deployment ? `deployment=${deployment.deploymentName} build=${deployment.buildId}` : 'unversioned';
}

/**
 * The first version of a deployment becomes its current version by itself, so a fresh deployment
 * (a new server, `docker compose up`) takes runs without an operator step. A deployment that has a
 * current version keeps it: a new version waits until an operator ramps it or makes it current.
 * Returns whether this call made the version current. Call it once the worker polls.
 */
export async function becomeCurrentIfNone(
  connection: NativeConnection,
  namespace: string,
  deployment: AgentDeployment,
  identity: string,
): Promise<boolean> {
  const service = connection.workflowService;
  const describe = () => service.describeWorkerDeployment({ namespace, deploymentName: deployment.deploymentName });
  const hasCurrent = (d: Described | undefined) =>
    Boolean(d?.workerDeploymentInfo?.routingConfig?.currentDeploymentVersion?.buildId);
  const described = await describeOnceCreated(describe);
  if (hasCurrent(described)) return false;
  try {
    await service.setWorkerDeploymentCurrentVersion({
      namespace,
      deploymentName: deployment.deploymentName,
      buildId: deployment.buildId,
      identity,
      // The version may not be registered yet (its first poll is on its way); no need to wait for it.
      allowNoPollers: true,
      // Set only if nobody changed the deployment since it was read.
      ...(described?.conflictToken?.length ? { conflictToken: described.conflictToken } : {}),
    });
    return true;
  } catch (err) {
    // Another worker of the fleet (`--scale worker=3`) made a version current first: fine.
    if (hasCurrent(await describe())) return false;
    throw err;
  }
}

type Described = Awaited<ReturnType<NativeConnection['workflowService']['describeWorkerDeployment']>>;

/** The deployment as the server has it; a worker's first poll creates it, shortly after the poll starts. */
async function describeOnceCreated(describe: () => Promise<Described>): Promise<Described | undefined> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await describe();
    } catch (err) {
      if ((err as { code?: number }).code !== GRPC_NOT_FOUND) throw err;
      // Still missing after a few seconds: set it without a conflict token.
      if (attempt >= 25) return undefined;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

const GRPC_NOT_FOUND = 5;
