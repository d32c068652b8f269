// The domain the runtime runs: the workflow, the worker's activities and the CLI all read it from
// here, and only through the Domain interface (common/domain.ts). A second domain is a folder
// beside support/, this one line, and the worker's factory of its services (activities/index.ts).
import type { Domain } from '../common/domain';
import { defaultAllowedTools, loopSignatureFor, registryOf } from '../common/tool-catalog';
import type { ToolRegistry } from '../common/tool-catalog';
import { supportDomain } from './support/index';

export const WIRED_DOMAIN: Domain = supportDomain;

export const TOOLS = WIRED_DOMAIN.tools;
export const TOOL_REGISTRY: ToolRegistry = registryOf(TOOLS);
/** The allowlist when none is given: the wired domain's read-only tools. */
export const DEFAULT_ALLOWED_TOOLS: readonly string[] = defaultAllowedTools(TOOLS);
/** The loop detector's signature of a call, folding the wired tools' free-text arguments. */
export const loopSignature = loopSignatureFor(TOOL_REGISTRY);
