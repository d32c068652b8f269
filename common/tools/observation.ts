// What a tool returns to the workflow: data from a named source, always untrusted.
/** Every tool result is untrusted input: data from a source, never an instruction or a permission. */
export const OBSERVATION_TRUST = 'untrusted' as const;

export interface Observation {
  tool: string;
  ok: boolean;
  data: unknown;
  /** Which system the data came from (provenance). */
  source: string;
  /** Always "untrusted" for tool results (absent in histories recorded before the label existed). */
  trust?: typeof OBSERVATION_TRUST;
  /** Size of the serialised data before any truncation. */
  bytes: number;
  truncated: boolean;
  /** Dot paths in data the tool marked as sensitive: redacted from the model's view and from logs. */
  sensitive?: string[];
  /** The kind of store a domain with state per conversation used (`sqlite`, `postgresql`): the run pins its later calls to it. */
  store?: string;
  /** A read repeated with nothing new in between: this is the step's earlier observation again, not a new reading. */
  repeat?: ObservationRepeat;
}

/** What the model is told about a repeated read (workflows/agent/repeats.ts). */
export interface ObservationRepeat {
  /** The step whose call this repeats (the tool ran then, not now). */
  of_step: number;
  note: string;
}
