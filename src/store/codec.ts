/**
 * How values are encoded at rest, shared by both stores and by keyv: plain JSON of the value.
 * keyv's own envelope (`{ value, expires }`) is dropped on purpose: expiry belongs to the backend
 * (Redis `PX`, the file store's clock), so raw Redis commands (SET NX, GETDEL, Lua) and keyv
 * read and write the same bytes, and a skewed client clock can never expire someone else's key.
 */
import type { DeserializedData } from "keyv";

/** Encode one value. `undefined` is not storable; it is rejected with a clear error. */
export function encode(value: unknown): string {
  const text = JSON.stringify(value);
  if (text === undefined) throw new TypeError(`store values must be JSON-serialisable (got ${typeof value})`);
  return text;
}

export function decode<T>(text: string): T {
  return JSON.parse(text) as T;
}

/** keyv `serialize` option: the value only, no envelope. */
export function keyvSerialize(data: DeserializedData<unknown>): string {
  return encode(data.value);
}

/** keyv `deserialize` option. */
export function keyvDeserialize<T>(text: string): DeserializedData<T> {
  return { value: decode<T>(text) };
}

/** Escape Redis glob metacharacters so a key prefix matches literally in `SCAN MATCH`. */
export function globEscape(text: string): string {
  return text.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
}
