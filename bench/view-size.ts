// What the model reads on the τ² retail train tasks, decision by decision, as the decide activity
// renders it (native tool calling): the ground truth's calls (with the authentication the replay
// adds) run in process on a copy of the database, and each decision's request (system prompt,
// tools, the whole run so far) is measured. Prompt tokens are estimated at 4 characters a token
// (JSON and English); cached tokens are the previous decision's request, the prefix a provider's
// cache holds (OpenAI caches prompts of 1,024 tokens and more). `node dist/bench/view-size.js`.
import path from 'node:path';
import { nativeSystemPromptOf } from '../activities/decide/system-prompt';
import { toolsFor } from '../activities/decide/native-tools';
import { functionNames, renderView } from '../common/model-view/model-view';
import type { ViewSource } from '../common/model-view/model-view';
import { catalogFor, registryOf } from '../common/tools/tool-catalog';
import type { HistoryEntry } from '../common/types';
import { DOMAINS } from '../domains/index';
import { loadRetailDb } from '../domains/retail/initial-db';
import { snapshot } from '../domains/retail/db';
import { retailToolsByName } from '../domains/retail/tools/index';
import { planReplay } from '../eval/tau2/replay-plan';
import { loadTasks } from '../eval/tau2/task';

const CHARS_PER_TOKEN = 4;
const CACHE_MIN_TOKENS = 1024;
/** gpt-4.1's list prices (USD per million tokens): input, cached input, output. */
const PRICE = { input: 2, cached: 0.5, output: 8 };
const COMPLETION_TOKENS = 30;

const domain = DOMAINS.retail!;
const registry = registryOf(domain.tools);
const allow = Object.keys(registry);
const catalog = catalogFor(allow, registry);
const names = functionNames(catalog.map((c) => c.name));
const system = nativeSystemPromptOf({ domain: 'retail' });
const tools = JSON.stringify(toolsFor(catalog, names, false));

const tasks = loadTasks(path.join(__dirname, '..', '..', 'domains', 'retail', 'data', 'tasks-train.json'));
const perDecision: number[] = [];
const perTask: Array<{ id: string; decisions: number; tokens: number; cached: number }> = [];
for (const task of tasks) {
  const db = loadRetailDb();
  const plan = planReplay(task, db);
  const world = snapshot(db);
  const history: HistoryEntry[] = [];
  let tokens = 0;
  let cached = 0;
  let previous = 0;
  for (let step = 1; step <= plan.calls.length + 1; step++) {
    const source: ViewSource = {
      goal: `Help the customer (task ${task.id}).`,
      domain: 'retail',
      principal: null,
      conversation: false,
      history,
      turns: [],
      omitted: { history: 0, turns: 0 },
    };
    const ref = { entries: history.length, turns: 0, compact_before: 0, compacted: 0, budget_tokens: 100_000 };
    const messages = [{ role: 'system', content: system }, ...renderView(source, ref, registry, names, 'native')];
    const t = Math.ceil((JSON.stringify(messages).length + tools.length) / CHARS_PER_TOKEN);
    perDecision.push(t);
    tokens += t;
    if (previous >= CACHE_MIN_TOKENS) cached += previous;
    previous = t;
    const call = plan.calls[step - 1];
    if (!call) break;
    const tool = retailToolsByName.get(call.name)!;
    let data: unknown;
    let ok = true;
    try {
      data = tool.handler(world, tool.args.parse(call.args));
    } catch (err) {
      ok = false;
      data = { error: err instanceof Error ? err.message : String(err) };
    }
    const bytes = JSON.stringify(data ?? null).length;
    history.push({
      step,
      action: { kind: 'tool', name: call.name, args: call.args },
      observation: { tool: call.name, ok, data, source: 'retail-db', bytes, truncated: false },
    });
  }
  perTask.push({ id: task.id, decisions: plan.calls.length + 1, tokens, cached });
}

const sorted = [...perDecision].sort((a, b) => a - b);
const median = (xs: number[]) => xs[Math.floor(xs.length / 2)]!;
const usd = (t: { tokens: number; cached: number; decisions: number }, caching: boolean) =>
  ((caching ? t.tokens - t.cached : t.tokens) * PRICE.input +
    (caching ? t.cached * PRICE.cached : 0) +
    t.decisions * COMPLETION_TOKENS * PRICE.output) /
  1e6;
const costs = perTask.map((t) => usd(t, false)).sort((a, b) => a - b);
const cachedCosts = perTask.map((t) => usd(t, true)).sort((a, b) => a - b);
const out = {
  tasks: perTask.length,
  decisions: perDecision.length,
  prompt_tokens_per_decision: { median: median(sorted), max: sorted.at(-1), min: sorted[0] },
  prompt_tokens_per_task: { median: median(perTask.map((t) => t.tokens).sort((a, b) => a - b)) },
  cached_share: perTask.reduce((n, t) => n + t.cached, 0) / perTask.reduce((n, t) => n + t.tokens, 0),
  usd_per_task_gpt_4_1: {
    without_cache: { median: median(costs), max: costs.at(-1) },
    with_cache: { median: median(cachedCosts), max: cachedCosts.at(-1) },
  },
};
console.log(JSON.stringify(out, null, 2));
