/**
 * MCP `inputSchema` -> a `parameters` object the OpenAI API accepts: an object root with
 * `properties`, no `oneOf`/`anyOf`/`allOf`/`enum`/`not` at the root (the API rejects those), no
 * `$schema`/`$id`. Nested schemas are kept as they are: the API accepts them in non-strict mode.
 */

type Json = Record<string, unknown>;

const DROPPED_AT_ROOT = ["$schema", "$id", "oneOf", "anyOf", "allOf", "enum", "not", "const"] as const;

function isObject(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function branchesOf(schema: Json): Json[] {
  const out: Json[] = [];
  for (const key of ["allOf", "anyOf", "oneOf"] as const) {
    const list = schema[key];
    if (Array.isArray(list)) out.push(...list.filter(isObject));
  }
  return out;
}

function requiredOf(schema: Json): string[] {
  return Array.isArray(schema.required)
    ? schema.required.filter((r): r is string => typeof r === "string")
    : [];
}

/**
 * Normalise one input schema. Root combinators are flattened into one object: `allOf` branches'
 * properties and required are merged; for `anyOf`/`oneOf` properties are merged and only fields
 * required by every branch stay required (the tool itself still validates the exact shape).
 */
export function normalizeInputSchema(input: unknown): Json {
  const schema: Json = isObject(input) ? { ...input } : {};
  const properties: Json = isObject(schema.properties) ? { ...schema.properties } : {};
  let required = requiredOf(schema);

  const allOf = Array.isArray(schema.allOf) ? schema.allOf.filter(isObject) : [];
  for (const b of allOf) {
    Object.assign(properties, isObject(b.properties) ? b.properties : {});
    required.push(...requiredOf(b));
  }
  const alternatives = branchesOf(schema).filter((b) => !allOf.includes(b));
  if (alternatives.length > 0) {
    for (const b of alternatives) Object.assign(properties, isObject(b.properties) ? b.properties : {});
    const common = alternatives.map(requiredOf).reduce((acc, r) => acc.filter((x) => r.includes(x)));
    required.push(...common);
  }
  required = [...new Set(required)].filter((r) => r in properties);

  for (const key of DROPPED_AT_ROOT) delete schema[key];
  const out: Json = { ...schema, type: "object", properties };
  if (required.length > 0) out.required = required;
  else delete out.required;
  return out;
}
