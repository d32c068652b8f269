// A workflow's own view of a Signal anyone in the namespace may send: every argument, however many,
// arrives undecoded (a RawValue), so that a payload no converter can read (an unknown encoding, or a
// payload the worker's codec could not decrypt: common/temporal/undecodable-payload.ts) reaches the handler,
// which drops it, instead of failing the workflow task before any handler runs. Senders use the
// plain definitions.
import { defaultPayloadConverter, RawValue, rawValueTypeInfo } from '@temporalio/common';
import type { TypeInfo } from '@temporalio/common';
import { defineSignal } from '@temporalio/workflow';
import { undecodableReason } from './undecodable-payload';

export function undecodedSignal(name: string) {
  return defineSignal<unknown[]>(name, { typeInfo: { inputTypes: EVERY_ARGUMENT_RAW } });
}
const EVERY_ARGUMENT_RAW = new Proxy([] as TypeInfo[], {
  get: (target, key) => (typeof key === 'string' && /^\d+$/.test(key) ? rawValueTypeInfo : Reflect.get(target, key)),
});

/** A Signal's first argument, decoded; a one-line reason when it cannot be. */
export function decodedArgument(arg: unknown): { value: unknown } | string {
  if (!(arg instanceof RawValue)) return { value: arg };
  const undecodable = undecodableReason(arg.payload);
  if (undecodable !== undefined) return `its payload cannot be decrypted (${oneLine(undecodable)})`;
  try {
    return { value: defaultPayloadConverter.fromPayload(arg.payload) };
  } catch (err) {
    return `its payload cannot be read (${oneLine(err instanceof Error ? err.message : String(err))})`;
  }
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').slice(0, 120);
}
