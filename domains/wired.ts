// The domains the runtime runs: the workflow, the worker's activities and the CLI all read them from
// here, and only through the Domain interface (common/domain.ts). A run names its domain
// (`AgentInput.domain`, default support); a new domain is a folder beside these and one line in
// DOMAINS, plus the worker's factory of its services (activities/index.ts).
import type { Domain } from '../common/domain';
import { checkAgentInput } from '../common/input';
import type { InputCheck } from '../common/input';
import { defaultAllowedTools, loopSignatureFor, registryOf } from '../common/tools/tool-catalog';
import type { ToolRegistry } from '../common/tools/tool-catalog';
import { retailDomain } from './retail/pack';
import { supportDomain } from './support/index';

export const DOMAINS: Readonly<Record<string, Domain>> = Object.freeze({
  support: supportDomain,
  retail: retailDomain,
});
export const DEFAULT_DOMAIN = 'support';
export const DOMAIN_NAMES = Object.keys(DOMAINS);

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

const registries: Record<string, ToolRegistry> = Object.fromEntries(
  Object.entries(DOMAINS).map(([name, domain]) => [name, registryOf(domain.tools)]),
);
/** A domain's tools by name. */
export const registryOfDomain = (domain: Domain): ToolRegistry => registries[domain.name]!;

/** Every domain's tools by name (tool names are unique across domains: test/retail/domain-boundary.test.ts). */
export const ALL_TOOLS: ToolRegistry = Object.assign({}, ...Object.values(registries)) as ToolRegistry;

/** The default domain, as the runtime ran it before domains were chosen per run (tests, demos). */
export const WIRED_DOMAIN: Domain = supportDomain;
export const TOOLS = WIRED_DOMAIN.tools;
export const TOOL_REGISTRY: ToolRegistry = registries[DEFAULT_DOMAIN]!;
/** The allowlist when none is given: the domain's read-only tools. */
export const DEFAULT_ALLOWED_TOOLS: readonly string[] = defaultAllowedTools(TOOLS);
export const defaultAllowedToolsOf = (domain: Domain): readonly string[] => defaultAllowedTools(domain.tools);

/** The loop detector's signature of a call, folding the tools' free-text arguments (names are unique). */
export const loopSignature = loopSignatureFor(ALL_TOOLS);
