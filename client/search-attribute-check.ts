// Does this namespace have the Agent* search attributes? Asked once per client (the operator
// service's ListSearchAttributes), so startRun can tell the workflow whether it may upsert them:
// an upsert of an unregistered attribute would fail the run's workflow task over and over.
// AGENT_SEARCH_ATTRIBUTES=on|off overrides the check (e.g. where the API key may not list them).
import type { Client } from '@temporalio/client';
import {
  AGENT_GOAL,
  AGENT_WAITING,
  AGENT_SEARCH_ATTRIBUTE_DEFINITIONS,
  OPTIONAL_SEARCH_ATTRIBUTES,
} from '../common/temporal/search-attributes';

// temporal.api.enums.v1.IndexedValueType (the proto package is not a direct dependency).
const TYPE_OF: Record<string, number> = {
  Keyword: 2, // INDEXED_VALUE_TYPE_KEYWORD
  Int: 3, // INDEXED_VALUE_TYPE_INT
};

export interface SearchAttributeCheck {
  /** The attributes every run keeps up to date are all registered. */
  available: boolean;
  /** Attributes that are missing or registered with another type (the optional ones included). */
  missing: string[];
  /** AgentGoal is registered too (optional: the run list's goal column). */
  goal: boolean;
  /** AgentWaiting is registered too (optional: the operator's inbox, `agent list --waiting`). */
  waiting: boolean;
  /** Set when the server could not be asked. */
  error?: string;
}

const cache = new WeakMap<Client, Promise<SearchAttributeCheck>>();

export function checkSearchAttributes(
  client: Client,
  env: NodeJS.ProcessEnv = process.env,
): Promise<SearchAttributeCheck> {
  const override = (env.AGENT_SEARCH_ATTRIBUTES ?? '').toLowerCase();
  if (override === 'on') return Promise.resolve({ available: true, missing: [], goal: true, waiting: true });
  if (override === 'off')
    return Promise.resolve({
      available: false,
      missing: [],
      goal: false,
      waiting: false,
      error: 'AGENT_SEARCH_ATTRIBUTES=off',
    });
  let pending = cache.get(client);
  if (!pending) {
    pending = ask(client);
    cache.set(client, pending);
  }
  return pending;
}

async function ask(client: Client): Promise<SearchAttributeCheck> {
  try {
    const response = await client.connection.operatorService.listSearchAttributes({
      namespace: client.options.namespace,
    });
    const custom = response.customAttributes ?? {};
    const absent = AGENT_SEARCH_ATTRIBUTE_DEFINITIONS.filter((d) => custom[d.name] !== TYPE_OF[d.type]);
    const available = absent.every((d) => OPTIONAL_SEARCH_ATTRIBUTES.has(d.name));
    // Each optional attribute on its own: a namespace without AgentWaiting still gets the goal column.
    const has = (name: string) => available && !absent.some((d) => d.name === name);
    return {
      available,
      missing: absent.map((d) => `${d.name}=${d.type}`),
      goal: has(AGENT_GOAL.name),
      waiting: has(AGENT_WAITING.name),
    };
  } catch (err) {
    return {
      available: false,
      missing: [],
      goal: false,
      waiting: false,
      error: (err as Error).message.split('\n')[0],
    };
  }
}

/** The temporal CLI commands that register what is missing (for messages to the operator). */
export function registrationHint(namespace: string): string {
  return AGENT_SEARCH_ATTRIBUTE_DEFINITIONS.map(
    (d) => `temporal operator search-attribute create --namespace ${namespace} --name ${d.name} --type ${d.type}`,
  ).join('; ');
}
