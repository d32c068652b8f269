import type { Observation, ToolInput } from '../../common/types';
import { envelope } from '../envelope';
import type { DataSource } from './data-source';
import type { PolicyDoc } from './seed-data';

/** The seeds' keyword ranking: count query words found in title + snippet; top two, or the first doc. */
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

export function createSearchPolicy(data: DataSource) {
  return async function search_policy(input: ToolInput): Promise<Observation> {
    const matches = rankPolicies((await data()).policies, String(input.args.query));
    return envelope('search_policy', 'policy-docs', true, { matches });
  };
}
