// The offline model in a conversation (`agent chat` with OPENAI_BASE_URL=offline): it plays the
// README's retail chat the way a well-behaved model would. It greets and waits; once the customer
// names an order and an email it finds them by the email, looks the order up, asks to cancel it (the
// runtime asks the customer's consent) and ends with what the tool result says. Asked anything else,
// it says in one line what it can play, and waits again. Every answer comes from the tool results.
import type { RecordedRequest, Reply, Script } from './scripted-llm-server';
import { final, message, tool } from './scripted-replies';
import { requestView } from './request-view';
import type { RequestView, SeenStep } from './request-view';
import { findKey, refundApprovalDemoModel } from './offline-model';

export const OFFLINE_GREETING = 'Hello! How can I help you today?';

/** The one line the offline model says when asked for something it cannot play. */
export const OFFLINE_SCENES =
  'I am a scripted stand-in for a model: I can only cancel a pending retail order. ' +
  'Tell me the order id and your email, e.g. "Please cancel order #W8770097, I no longer need it. My email is ivan.santos3158@example.com".';

const EMAIL = /[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/;
const ORDER = /#W\d{7}/;

/** The support domain's line: the refund check for the run's user. */
export const OFFLINE_SUPPORT_SCENES =
  'I am a scripted stand-in for a model: I can only check whether your last payment can be refunded. Ask me "Can I get a refund?".';

/**
 * The model OPENAI_BASE_URL=offline serves: conversations are played here; any other run is the
 * refund scenario (refundApprovalDemoModel), as before.
 */
export const offlineModel: Script = (req: RecordedRequest, index: number) => {
  const refundScene = refundApprovalDemoModel as (req: RecordedRequest, index: number) => Reply;
  const view = requestView(req.body);
  if (view?.conversation === undefined) return refundScene(req, index);
  const last = view.turns.at(-1);
  // Nothing typed yet: greet once, then wait for the customer (no answer before they speak).
  if (last === undefined) return message(OFFLINE_GREETING);
  if (view.domain === 'retail') {
    const request = findRequest(view);
    if (request !== undefined) return cancelScene(view, request);
    return message(last.from === 'customer' ? OFFLINE_SCENES : OFFLINE_GREETING);
  }
  // The support chat: the refund check once the customer asks about a refund (and the run names its user).
  const asked = view.turns.some((t) => t.from === 'customer' && /refund/i.test(t.text));
  if (asked && view.principal) return refundScene(req, index);
  return message(last.from === 'customer' ? OFFLINE_SUPPORT_SCENES : OFFLINE_GREETING);
};

interface CancelRequest {
  email: string;
  orderId: string;
  reason: 'no longer needed' | 'ordered by mistake';
}

/** The customer's latest message that names both an email and an order. */
function findRequest(view: RequestView): CancelRequest | undefined {
  for (const turn of [...view.turns].reverse()) {
    if (turn.from !== 'customer') continue;
    const email = EMAIL.exec(turn.text)?.[0];
    const orderId = ORDER.exec(turn.text)?.[0];
    if (email && orderId)
      return { email, orderId, reason: /mistake/i.test(turn.text) ? 'ordered by mistake' : 'no longer needed' };
  }
  return undefined;
}

function cancelScene(view: RequestView, want: CancelRequest): Reply {
  const found = latest(view.steps, 'find_user_id_by_email');
  if (found === undefined) return tool('find_user_id_by_email', { email: want.email });
  if (found.observation.ok === false) return final(`I found no customer with the email ${want.email}.`);

  const details = latest(view.steps, 'get_order_details');
  if (details === undefined) return tool('get_order_details', { order_id: want.orderId });
  if (details.observation.ok === false) return final(`I could not find order ${want.orderId} on your account.`);
  const status = findKey(dataOf(details), 'status');
  const cancelled = latest(view.steps, 'cancel_pending_order');
  if (cancelled === undefined) {
    if (status !== 'pending')
      return final(`Order ${want.orderId} is ${String(status)}, so it cannot be cancelled; only pending orders can.`);
    return tool('cancel_pending_order', { order_id: want.orderId, reason: want.reason });
  }
  const data = dataOf(cancelled);
  if (cancelled.observation.ok !== false && findKey(data, 'status') === 'cancelled') {
    const giftCard = JSON.stringify(findKey(data, 'payment_history') ?? '').includes('gift_card');
    return final(
      `Order ${want.orderId} is cancelled; the refund goes back to your original payment method ` +
        (giftCard ? 'at once.' : 'in 5-7 business days.'),
    );
  }
  if (findKey(data, 'declined') === true) return final(`All right, order ${want.orderId} stays as it is.`);
  return final(`Order ${want.orderId} was not cancelled: the store refused it.`);
}

/** The latest call of a tool, with its result. */
function latest(steps: SeenStep[], name: string): SeenStep | undefined {
  return [...steps].reverse().find((s) => s.action.kind === 'tool' && s.action.name === name);
}

/** A step's result data; observations cut short may arrive as JSON text. */
function dataOf(step: SeenStep): unknown {
  const data = step.observation.data;
  if (typeof data !== 'string') return data;
  try {
    return JSON.parse(data) as unknown;
  } catch {
    return data;
  }
}
