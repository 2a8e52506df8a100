/**
 * A server's `elicitation/create` (MCP 2025-11-25, client side): the question goes to the person
 * whose turn made the call, as their platform's own form, and only to them. The spec's restricted
 * schema (a flat object of string / number / integer / boolean / enum fields) becomes `FormField`s
 * that every adapter renders the same way; what a person types comes back as text and is read here
 * (`readAnswers`), so each platform's form only collects strings. URL mode is a private link.
 * Declined and cancelled questions are noted in the tool's result for the model (`noteOf`).
 */
import { randomUUID } from "node:crypto";
import { z } from "zod";
import type { Speaker } from "../keys.js";

export interface FormField {
  name: string;
  /** The schema's `title`, else the field's name. */
  label: string;
  description?: string;
  type: "string" | "number" | "integer" | "boolean" | "enum";
  /** Enum values, in order (`enum`, `oneOf[].const`, or an array's `items`). */
  options?: { value: string; label: string }[];
  /** A multi-select enum (`type: "array"`): the answer is a list. */
  multiple?: boolean;
  required: boolean;
  /** The schema's default: prefilled, and used when the field is left empty (SEP-1034). */
  default?: string | number | boolean | string[];
}

export type FormQuestion =
  | { mode: "form"; server: string; message: string; fields: FormField[] }
  | { mode: "url"; server: string; message: string; url: string };

export type FormAnswer =
  | { action: "accept"; content?: Record<string, string | number | boolean | string[]> }
  | { action: "decline" }
  | { action: "cancel" };

/** How an adapter asks the requester; absent where no form can be shown (the server gets cancel). */
export interface FormChannel {
  ask(question: FormQuestion, requester: Speaker, signal: AbortSignal): Promise<FormAnswer>;
  /**
   * A note only the requester sees, with nothing to answer (an OAuth sign-in link, the account a
   * sign-in connected, a refusal): sent, not awaited.
   */
  tell(note: PrivateNote, requester: Speaker): Promise<void>;
}

/** A private note for the requester: which server it is about, what it says, and a link if any. */
export interface PrivateNote {
  server: string;
  message: string;
  url?: string;
}

const Primitive = z
  .object({
    type: z.enum(["string", "number", "integer", "boolean", "array"]).optional(),
    title: z.string().optional(),
    description: z.string().optional(),
    enum: z.array(z.string()).optional(),
    enumNames: z.array(z.string()).optional(),
    oneOf: z.array(z.object({ const: z.string(), title: z.string().optional() })).optional(),
    items: z
      .object({
        enum: z.array(z.string()).optional(),
        anyOf: z.array(z.object({ const: z.string(), title: z.string().optional() })).optional(),
      })
      .optional(),
    default: z.union([z.string(), z.number(), z.boolean(), z.array(z.string())]).optional(),
  })
  .passthrough();

export const RequestedSchema = z.object({
  type: z.literal("object"),
  properties: z.record(z.string(), Primitive),
  required: z.array(z.string()).optional(),
});

/** The fields of a form-mode request's `requestedSchema`, in the schema's order. */
/**
 * A platform form channel's wait for the requester's answer, one path for all of them: `entry`
 * (who may answer, and `settle`) is kept in `pending` under a fresh form id while `show(id)` puts
 * the form in front of them. It resolves with their answer, or `cancel` when `signal` aborts (the
 * turn stopped, the question timed out); it rejects, leaving nothing pending, when showing fails.
 */
export function awaitAnswer<E>(
  pending: Map<string, E>,
  entry: (settle: (answer: FormAnswer) => void) => E,
  signal: AbortSignal,
  show: (id: string) => Promise<void>,
): Promise<FormAnswer> {
  const id = randomUUID();
  return new Promise<FormAnswer>((resolve, reject) => {
    const settle = (answer: FormAnswer) => {
      pending.delete(id);
      resolve(answer);
    };
    pending.set(id, entry(settle));
    signal.addEventListener("abort", () => settle({ action: "cancel" }), { once: true });
    show(id).catch((err: unknown) => {
      pending.delete(id);
      reject(err);
    });
  });
}

export function formFields(schema: unknown): FormField[] {
  const s = RequestedSchema.parse(schema);
  const required = new Set(s.required ?? []);
  return Object.entries(s.properties).map(([name, p]) => {
    const options =
      p.oneOf?.map((o) => ({ value: o.const, label: o.title ?? o.const })) ??
      p.enum?.map((v, i) => ({ value: v, label: p.enumNames?.[i] ?? v })) ??
      p.items?.anyOf?.map((o) => ({ value: o.const, label: o.title ?? o.const })) ??
      p.items?.enum?.map((v) => ({ value: v, label: v }));
    const type = options ? "enum" : p.type === "array" ? "string" : (p.type ?? "string");
    return {
      name,
      label: p.title ?? name,
      ...(p.description ? { description: p.description } : {}),
      type,
      ...(options ? { options } : {}),
      ...(p.type === "array" ? { multiple: true } : {}),
      required: required.has(name),
      ...(p.default !== undefined ? { default: p.default } : {}),
    } as FormField;
  });
}

/** The default as text, for prefilling a text input. */
export function defaultText(f: FormField): string {
  if (f.default === undefined) return "";
  return Array.isArray(f.default) ? f.default.join(", ") : String(f.default);
}

/**
 * Typed content from what the person entered (text per field; empty = not given). An empty field
 * takes the schema's default; a missing required one or a value of the wrong type is an error
 * naming the field, so the form can be asked again rather than sending the server bad data.
 */
export function readAnswers(
  fields: readonly FormField[],
  raw: Readonly<Record<string, string | string[] | undefined>>,
): { content: Record<string, string | number | boolean | string[]> } | { error: string } {
  const content: Record<string, string | number | boolean | string[]> = {};
  for (const f of fields) {
    const given = raw[f.name];
    const text = Array.isArray(given) ? given.join(",") : (given ?? "").trim();
    if (!text) {
      if (f.default !== undefined) content[f.name] = f.default;
      else if (f.required) return { error: `"${f.label}" is required` };
      continue;
    }
    if (f.type === "number" || f.type === "integer") {
      const n = Number(text);
      if (!Number.isFinite(n) || (f.type === "integer" && !Number.isInteger(n)))
        return { error: `"${f.label}" must be ${f.type === "integer" ? "a whole number" : "a number"}` };
      content[f.name] = n;
    } else if (f.type === "boolean") {
      if (/^(y|yes|true|1|on)$/i.test(text)) content[f.name] = true;
      else if (/^(n|no|false|0|off)$/i.test(text)) content[f.name] = false;
      else return { error: `"${f.label}" must be yes or no` };
    } else if (f.type === "enum") {
      const picked = f.multiple
        ? text
            .split(",")
            .map((v) => v.trim())
            .filter(Boolean)
        : [text];
      const ok = picked.map((v) => f.options?.find((o) => o.value === v || o.label === v)?.value);
      if (ok.some((v) => v === undefined))
        return { error: `"${f.label}" must be one of ${f.options?.map((o) => o.value).join(", ")}` };
      content[f.name] = f.multiple ? (ok as string[]) : (ok[0] as string);
    } else content[f.name] = text;
  }
  return { content };
}

/** What the model is told when the person did not answer (appended to the tool's result). */
export function noteOf(question: FormQuestion, answer: FormAnswer, who: string): string | undefined {
  if (answer.action === "accept") return undefined;
  const what = answer.action === "decline" ? "declined" : "did not answer (cancelled or timed out)";
  return `[${who} ${what} the question "${question.message}" from server "${question.server}"]`;
}
