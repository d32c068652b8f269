// The domain registry refuses, when a module registers it, a domain the runtime could not run:
// a name a run input cannot carry, a tool name a model or an MCP listing cannot (a dot: MCP tools are
// <server>.<tool>), a second domain of the same name or a tool another domain has. Found by a
// newcomer who followed docs/domains.md: such domains registered, then every run was refused.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DOMAIN_NAMES, registerDomain } from '../../domains/index';
import { supportDomain } from '../../domains/support/index';
import type { Domain } from '../../common/domain';

const tool = supportDomain.tools[0]!;
const domainNamed = (name: string, toolName = 'find_book'): Domain => ({
  ...supportDomain,
  name,
  tools: [{ ...tool, name: toolName }],
});

describe('the domain registry', () => {
  it('refuses bad names and clashes, and registers nothing then', () => {
    const before = [...DOMAIN_NAMES];
    const refused: Array<[Domain, RegExp]> = [
      [domainNamed('x'.repeat(65)), /a domain's name is 1-64 of a-z/],
      [domainNamed('Bad Name!'), /a domain's name is 1-64 of a-z/],
      [domainNamed('library', 'fs.read_file'), /tool "fs\.read_file": .*no dot/],
      [domainNamed('library', 'Bad Name!'), /tool "Bad Name!"/],
      [domainNamed('library', 'x'.repeat(65)), /a tool's name is 1-64/],
      [domainNamed('support'), /domain "support" is registered twice/],
      [domainNamed('library', tool.name), new RegExp(`tool "${tool.name}" is another domain's`)],
    ];
    for (const [domain, why] of refused) assert.throws(() => registerDomain(domain), why, domain.name.slice(0, 20));
    assert.deepEqual(DOMAIN_NAMES, before);
  });
});
