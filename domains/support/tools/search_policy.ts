import { z } from 'zod';
import { defineSupportTool, LOOKUP_OPTIONS } from './args';
import type { PolicyDoc } from '../data';

export const searchPolicy = defineSupportTool({
  name: 'search_policy',
  description: 'Search refund and billing policy snippets',
  args: z.strictObject({ query: z.string().trim().min(1).max(500) }),
  ...LOOKUP_OPTIONS,
  // A search, not a lookup by key: against a real search service it can take seconds, so it runs as a
  // normal activity (heartbeats, the hung-worker allowance) rather than inside the workflow task.
  localActivity: false,
  freeText: ['query'],
  async handler({ query }, ctx) {
    const matches = rankPolicies((await ctx.services.data()).policies, query);
    return ctx.envelope('policy-docs', true, { matches });
  },
});

/** Keyword ranking: count query words found in title + snippet; top two, or the first doc. */
export function rankPolicies(docs: PolicyDoc[], query: string): PolicyDoc[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  const score = (doc: PolicyDoc) => {
    const haystack = `${doc.title} ${doc.snippet}`.toLowerCase();
    return words.filter((w) => haystack.includes(w)).length;
  };
  const ranked = docs.map((doc, i) => ({ doc, i, s: score(doc) })).sort((a, b) => b.s - a.s || a.i - b.i);
  const top = ranked
    .filter((r) => r.s > 0)
    .slice(0, 2)
    .map((r) => r.doc);
  return top.length > 0 ? top : docs.slice(0, 1);
}
