// What the decide activity knows that its output does not carry (the messages it sent, the model's
// finish reasons), handed to the GenAI span of a traced worker (worker/genai-spans.ts). Without
// tracing no one listens and a report costs a WeakMap lookup: this file loads no OTel module.

export interface DecisionDetails {
  /** The chat messages as sent: the model's view, already redacted as the model reads it. */
  messages?: readonly unknown[];
  /** The choices' finish_reason values (stop, tool_calls, length, content_filter...). */
  finishReasons?: readonly string[];
}

type Listener = (details: DecisionDetails) => void;

/** Keyed by the activity's Context: one listener per running decision, gone with it. */
const listeners = new WeakMap<object, Listener>();

/** Called by the tracing interceptor around one decision. */
export function listenForDecisionDetails(activity: object, listener: Listener): void {
  listeners.set(activity, listener);
}

/** Called by the decide activity; a no-op unless the worker traces. */
export function reportDecisionDetails(activity: object, details: DecisionDetails): void {
  listeners.get(activity)?.(details);
}
