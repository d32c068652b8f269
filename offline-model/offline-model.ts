// A deterministic stand-in for the LLM, for `npm run demo` without a model service. It plays the
// refund scenario (user 42) the way a well-behaved model would: profile, billing, policy, then a
// final answer computed from what the tools actually returned (never from hard-coded facts).
import type { RecordedRequest, Reply, Script } from './scripted-llm-server';
import { final, tool } from './scripted-replies';
import { requestView } from './request-view';

interface Observation {
  tool?: string;
  ok?: boolean;
  data?: unknown;
}
interface HistoryEntry {
  action?: { kind?: string; name?: string };
  observation?: Observation;
}
interface Payload {
  goal?: string;
  principal?: { user_id?: number };
  state_summary?: { tools_used?: string[] };
  untrusted_observations?: { steps?: HistoryEntry[] };
  available_tools?: Array<{ name?: string }>;
}

export const refundDemoModel: Script = (req: RecordedRequest): Reply => {
  const payload = readPayload(req);
  // A payload we cannot read is a runtime bug: answer 400 so it fails loudly instead of "deciding".
  if (payload === undefined) {
    return {
      status: 400,
      body: {
        error: {
          message: 'offline model: user message is not the JSON payload',
          type: 'invalid_request_error',
          code: null,
        },
      },
    };
  }

  const userId = payload.principal?.user_id ?? Number(/user\s+(\d+)/i.exec(payload.goal ?? '')?.[1] ?? NaN);
  if (!Number.isInteger(userId))
    return final('I cannot verify a refund: the request does not say which user is asking.');

  const history = payload.untrusted_observations?.steps ?? [];
  const used = new Set([...(payload.state_summary?.tools_used ?? []), ...history.map((h) => h.action?.name ?? '')]);
  const available = new Set((payload.available_tools ?? []).map((t) => t.name));
  const plan: Array<[string, Record<string, unknown>]> = [
    ['get_user_profile', { user_id: userId }],
    ['get_user_billing', { user_id: userId }],
    ['search_policy', { query: 'refund policy pro monthly' }],
  ];
  for (const [name, args] of plan) {
    if (used.has(name)) continue; // called once only: repeating it would trip loop detection
    if (!available.has(name)) return final(`I cannot verify a refund: the ${name} tool is not available to me.`);
    return tool(name, args);
  }
  return final(answerFrom(userId, history));
};

/**
 * The same model, for runs that may act (`npm run demo -- --refund`): after profile, billing and
 * policy, if the facts say a refund is due and issue_refund is available, it proposes exactly
 * that refund (the amount from the billing record), then reports what happened to it: confirmed,
 * rejected by the operator, or refused by the refunds service. Otherwise it answers as
 * refundDemoModel does.
 */
export const refundApprovalDemoModel: Script = (req, index): Reply => {
  const payload = readPayload(req);
  if (payload === undefined) return refundDemoModel(req, index) as Reply;
  const userId = payload.principal?.user_id;
  const used = new Set(payload.state_summary?.tools_used ?? []);
  const available = new Set((payload.available_tools ?? []).map((t) => t.name));
  const planDone = ['get_user_profile', 'get_user_billing', 'search_policy'].every((name) => used.has(name));
  if (!Number.isInteger(userId) || !planDone || !available.has('issue_refund'))
    return refundDemoModel(req, index) as Reply;

  const history = payload.untrusted_observations?.steps ?? [];
  if (used.has('issue_refund')) return final(refundOutcome(history));
  const verdict = assess(userId!, history);
  if (!verdict.refundable) return final(verdict.answer);
  return tool('issue_refund', { user_id: userId, amount_usd: verdict.amountUsd, reason: verdict.reason });
};

function refundOutcome(history: HistoryEntry[]): string {
  const entry = [...history].reverse().find((h) => h.action?.name === 'issue_refund');
  const data = (entry?.observation?.data ?? {}) as Record<string, unknown>;
  const refund = data.refund as { refund_id?: number; amount_usd?: number; state?: string } | undefined;
  if (entry?.observation?.ok && refund?.state === 'confirmed') {
    return `Done: USD ${Number(refund.amount_usd).toFixed(2)} is refunded to the original payment method (refund #${refund.refund_id}).`;
  }
  if (typeof data.rejected === 'string') {
    return entry?.observation && (entry.observation as { source?: string }).source === 'operator'
      ? `The refund was not made: support declined it (${data.rejected}).`
      : `The refund was not made: the refunds service refused it (${data.rejected}).`;
  }
  return 'The refund was not made: I could not confirm it with the refunds service.';
}

function readPayload(req: RecordedRequest): Payload | undefined {
  // Either form the decide activity sends: the whole run as messages, or one JSON payload.
  return requestView(req.body) as Payload | undefined;
}

function answerFrom(userId: number, history: HistoryEntry[]): string {
  return assess(userId, history).answer;
}

type Assessment =
  { refundable: false; answer: string } | { refundable: true; answer: string; amountUsd: number; reason: string };

function assess(userId: number, history: HistoryEntry[]): Assessment {
  const no = (answer: string): Assessment => ({ refundable: false, answer });
  const profile = latestData(history, 'get_user_profile');
  const billing = latestData(history, 'get_user_billing');
  const policy = latestData(history, 'search_policy');
  if (billing === undefined) return no('I cannot verify a refund: I have no billing record for this user.');

  const name = findKey(profile, 'name');
  // The runtime redacts the name from the model's view (data minimisation): fall back to the id.
  const who = typeof name === 'string' && name !== '[redacted]' ? name : `User ${userId}`;
  const planName = findKey(billing, 'plan');
  const price = findKey(billing, 'price_usd');
  const days = findKey(billing, 'days_since_first_payment');
  if (typeof planName !== 'string' || typeof price !== 'number') {
    return no('I cannot verify a refund: the billing record has no plan or price.');
  }
  const amount = `USD ${price.toFixed(2)}`;
  if (planName === 'free' || price <= 0) {
    return no(
      `No. ${who} is on the ${planName} plan (${amount}), which has no billable payments, so there is nothing to refund.`,
    );
  }

  const windowDays = Number(/refundable within (\d+) days/i.exec(policyText(policy))?.[1] ?? NaN);
  if (!Number.isFinite(windowDays))
    return no(`I cannot verify a refund for ${who}: no refund policy with a refund window was found.`);
  if (typeof days !== 'number')
    return no(`I cannot verify a refund for ${who}: the billing record has no first-payment date.`);
  if (days > windowDays) {
    return no(
      `No. ${who}'s ${planName} plan (${amount}) was first paid ${days} days ago, outside the ${windowDays}-day refund window, so a refund is not possible.`,
    );
  }
  return {
    refundable: true,
    answer: `Yes. ${who}'s ${planName} plan (${amount}) was first paid ${days} days ago, within the ${windowDays}-day refund window, so a refund of ${amount} is possible to the original payment method.`,
    amountUsd: price,
    reason: `${planName} first paid ${days} days ago, within the ${windowDays}-day refund window`,
  };
}

/** Data of the latest successful call of a tool; a failed or missing call yields undefined. */
function latestData(history: HistoryEntry[], name: string): unknown {
  for (let i = history.length - 1; i >= 0; i--) {
    const h = history[i];
    if ((h?.observation?.tool ?? h?.action?.name) !== name) continue;
    if (h?.observation?.ok === false) return undefined;
    const data = h?.observation?.data;
    // Truncated observations may arrive as JSON text.
    if (typeof data === 'string') {
      try {
        return JSON.parse(data);
      } catch {
        return data;
      }
    }
    return data;
  }
  return undefined;
}

// Tools may wrap their results ({user: {...}}, {billing: {...}}), so look one level deep or more.
export function findKey(value: unknown, key: string): unknown {
  if (typeof value !== 'object' || value === null) return undefined;
  if (!Array.isArray(value) && key in value) return (value as Record<string, unknown>)[key];
  for (const child of Object.values(value)) {
    const found = findKey(child, key);
    if (found !== undefined) return found;
  }
  return undefined;
}

function policyText(policy: unknown): string {
  return typeof policy === 'string' ? policy : JSON.stringify(policy ?? '');
}
