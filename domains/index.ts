// The domains the runtime runs: the workflow, the worker's activities (domains/backends.ts adds
// each one's Node-side services), the MCP server and the CLI all read them from here, and only
// through the Domain interface (common/domain.ts). A run names its domain (`AgentInput.domain`,
// default support). A new domain is a folder beside these and one `registerDomain` line below
// (docs/domains.md walks through it). This module is pure: the workflow bundle imports it.
import type { Domain } from '../common/domain';
import { checkAgentInput } from '../common/input';
import type { InputCheck } from '../common/input';
import { defaultAllowedTools, loopSignatureFor, registryOf } from '../common/tools/tool-catalog';
import type { ToolRegistry } from '../common/tools/tool-catalog';
import { retailDomain } from './retail/pack';
import { supportDomain } from './support/index';

const domains: Record<string, Domain> = {};
const registries: Record<string, ToolRegistry> = {};
/** Every domain by name. */
export const DOMAINS: Readonly<Record<string, Domain>> = domains;
/** Every domain's name, in the order registered. */
export const DOMAIN_NAMES: readonly string[] = [];
/** Every domain's tools by name (tool names are unique across domains: test/retail/domain-boundary.test.ts). */
export const ALL_TOOLS: ToolRegistry = {};

/** A run names its domain in its input (at most 64 characters). */
const DOMAIN_NAME = /^[a-z0-9_-]{1,64}$/;
/** What a model's function name may be (OpenAI's rule), without the dot MCP tools' names carry. */
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Adds a domain to the registry. Call it when a module loads (below, or in a module the worker's
 * workflow code and activities both import), never during a run: the workflow reads the registry
 * while it replays.
 */
export function registerDomain(domain: Domain): void {
  if (!DOMAIN_NAME.test(domain.name))
    throw new Error(`domain "${domain.name.slice(0, 80)}": a domain's name is 1-64 of a-z, 0-9, _ and -`);
  if (Object.hasOwn(domains, domain.name)) throw new Error(`domain "${domain.name}" is registered twice`);
  const badName = domain.tools.find((tool) => !TOOL_NAME.test(tool.name));
  if (badName)
    throw new Error(
      `domain "${domain.name}": tool "${badName.name.slice(0, 80)}": a tool's name is 1-64 of letters, digits, _ and - (no dot: MCP tools are <server>.<tool>)`,
    );
  const clash = domain.tools.find((tool) => Object.hasOwn(ALL_TOOLS, tool.name));
  if (clash) throw new Error(`domain "${domain.name}": tool "${clash.name}" is another domain's`);
  domains[domain.name] = domain;
  registries[domain.name] = registryOf(domain.tools);
  (DOMAIN_NAMES as string[]).push(domain.name);
  Object.assign(ALL_TOOLS, registries[domain.name]);
}

registerDomain(supportDomain);
registerDomain(retailDomain);

export const DEFAULT_DOMAIN = 'support';

/** The run's domain; its input was checked at entry, so an unknown name is a bug. */
export function domainOf(input: { domain?: string | undefined }): Domain {
  const name = input.domain ?? DEFAULT_DOMAIN;
  const domain = Object.hasOwn(DOMAINS, name) ? DOMAINS[name] : undefined;
  if (!domain) throw new Error(`unknown domain "${name}"`);
  return domain;
}

/** The run input's check: a known domain, then the schema and that domain's rules. */
export function checkRunInput(raw: unknown): InputCheck {
  const name = (raw as { domain?: unknown } | null)?.domain ?? DEFAULT_DOMAIN;
  if (typeof name !== 'string' || !Object.hasOwn(DOMAINS, name))
    return {
      ok: false,
      error: `invalid run input: domain: unknown domain "${String(name).slice(0, 64)}" (known: ${DOMAIN_NAMES.join(', ')})`,
    };
  return checkAgentInput(raw, DOMAINS[name]!);
}

/** A domain's tools by name. */
export const registryOfDomain = (domain: Domain): ToolRegistry => registries[domain.name]!;

/** The allowlist when none is given: the domain's read-only tools. */
export const defaultAllowedToolsOf = (domain: Domain): readonly string[] => defaultAllowedTools(domain.tools);

/** The loop detector's signature of a call, folding the tools' free-text arguments (names are unique). */
export const loopSignature = loopSignatureFor(ALL_TOOLS);
