// Each domain's Node side (its backend/: the services its handlers use), for the worker's
// activities and the MCP server. The pure registry (domains/index.ts) is what the workflow bundles;
// this one opens files and connections, so only the worker's side imports it. A new domain is one
// `registerBackend` line here, beside its `registerDomain` line there; a domain kept outside this
// tree is named by AGENT_DOMAINS instead (registerDomainFolders).
import path from 'node:path';
import type { DomainBackend } from '../common/domain';
import { readEnv } from '../runtime/env-vars';
import { DOMAINS, registerDomain } from './index';
import { retailBackend } from './retail/backend/index';
import type { RetailGiven } from './retail/backend/index';
import { supportBackend } from './support/backend/index';
import type { SupportGiven } from './support/backend/index';

/** What a worker may be given instead of a domain's systems of record from the environment (tests, the eval). */
export type BackendGiven = SupportGiven & RetailGiven;

const backends: Record<string, DomainBackend<unknown, BackendGiven>> = {};

/**
 * Adds a domain's Node side, and the domain itself to the registry unless it is there already. A
 * domain names what it may be given with its own type (optional keys): the worker hands every
 * backend the same object, and each reads its own keys.
 */
export function registerBackend<Services, Given extends object = BackendGiven>(
  backend: DomainBackend<Services, Given>,
): void {
  const { domain } = backend;
  if (Object.hasOwn(backends, domain.name)) throw new Error(`domain "${domain.name}" has two backends`);
  if (!Object.hasOwn(DOMAINS, domain.name)) registerDomain(domain);
  else if (DOMAINS[domain.name] !== domain) throw new Error(`domain "${domain.name}" is registered as another object`);
  backends[domain.name] = backend as unknown as DomainBackend<unknown, BackendGiven>;
}

registerBackend(supportBackend);
registerBackend(retailBackend);

/** Every registered domain's backend; a domain registered without one is a wiring bug. */
export function domainBackends(): DomainBackend<unknown, BackendGiven>[] {
  return Object.keys(DOMAINS).map((name) => {
    const backend = backends[name];
    if (!backend) throw new Error(`domain "${name}" has no backend (domains/backends.ts)`);
    return backend;
  });
}

/** The services of a domain's tools, opened from the environment (the MCP server). */
export function servicesOf(name: string): unknown {
  const backend = Object.hasOwn(backends, name) ? backends[name] : undefined;
  if (!backend) throw new Error(`no services for domain "${name}"`);
  return backend.services({});
}

const loadedFolders = new Set<string>();

/**
 * Registers the compiled domain folders AGENT_DOMAINS names (each has a backend/ folder whose index
 * exports `backend`), once per process; returns their absolute paths, which the worker's workflow code must
 * register too (worker/workflow-bundle.ts).
 */
export function registerDomainFolders(env: NodeJS.ProcessEnv = process.env): string[] {
  const folders = (readEnv('AGENT_DOMAINS', env) ?? []).map((folder) => path.resolve(folder));
  for (const folder of folders) {
    if (loadedFolders.has(folder)) continue;
    // A folder named at run time: a static import cannot name it.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { backend } = require(path.join(folder, 'backend', 'index')) as {
      backend?: DomainBackend<unknown, BackendGiven>;
    };
    if (!backend) throw new Error(`AGENT_DOMAINS: ${folder}/backend/index exports no \`backend\``);
    registerBackend(backend);
    loadedFolders.add(folder);
  }
  return folders;
}
