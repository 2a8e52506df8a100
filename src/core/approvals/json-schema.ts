/**
 * A small JSON-schema validator for the subset MCP tools advertise (type, properties, required,
 * additionalProperties, items, enum, const, min/max, lengths, pattern, anyOf/oneOf/allOf).
 * Planned tool calls are checked with it before a plan exists. Unknown keywords are ignored.
 */

export type JsonSchema = Record<string, unknown>;

function typeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

function matchesType(value: unknown, type: string): boolean {
  const actual = typeOf(value);
  if (type === "number") return actual === "number" || actual === "integer";
  return actual === type;
}

function isSchema(value: unknown): value is JsonSchema {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Validate `value` against `schema`; returns readable errors ("amount: expected string, got number"). */
export function validateJsonSchema(schema: JsonSchema, value: unknown, path = "arguments"): string[] {
  const errors: string[] = [];
  const type = schema.type;
  if (typeof type === "string" || Array.isArray(type)) {
    const types = (Array.isArray(type) ? type : [type]).filter((t): t is string => typeof t === "string");
    if (!types.some((t) => matchesType(value, t))) {
      return [`${path}: expected ${types.join(" or ")}, got ${typeOf(value)}`];
    }
  }
  if (Array.isArray(schema.enum) && !schema.enum.some((e) => sameJson(e, value))) {
    errors.push(`${path}: must be one of ${JSON.stringify(schema.enum)}`);
  }
  if ("const" in schema && !sameJson(schema.const, value)) {
    errors.push(`${path}: must be ${JSON.stringify(schema.const)}`);
  }
  if (typeof value === "string") errors.push(...stringErrors(schema, value, path));
  if (typeof value === "number") errors.push(...numberErrors(schema, value, path));
  if (Array.isArray(value)) errors.push(...arrayErrors(schema, value, path));
  if (typeOf(value) === "object")
    errors.push(...objectErrors(schema, value as Record<string, unknown>, path));
  errors.push(...combinatorErrors(schema, value, path));
  return errors;
}

function stringErrors(schema: JsonSchema, value: string, path: string): string[] {
  const errors: string[] = [];
  if (typeof schema.minLength === "number" && value.length < schema.minLength) {
    errors.push(`${path}: shorter than ${schema.minLength}`);
  }
  if (typeof schema.maxLength === "number" && value.length > schema.maxLength) {
    errors.push(`${path}: longer than ${schema.maxLength}`);
  }
  if (typeof schema.pattern === "string" && !new RegExp(schema.pattern, "u").test(value)) {
    errors.push(`${path}: does not match ${schema.pattern}`);
  }
  return errors;
}

function numberErrors(schema: JsonSchema, value: number, path: string): string[] {
  const errors: string[] = [];
  if (typeof schema.minimum === "number" && value < schema.minimum)
    errors.push(`${path}: below ${schema.minimum}`);
  if (typeof schema.maximum === "number" && value > schema.maximum)
    errors.push(`${path}: above ${schema.maximum}`);
  if (typeof schema.exclusiveMinimum === "number" && value <= schema.exclusiveMinimum) {
    errors.push(`${path}: must be above ${schema.exclusiveMinimum}`);
  }
  if (typeof schema.exclusiveMaximum === "number" && value >= schema.exclusiveMaximum) {
    errors.push(`${path}: must be below ${schema.exclusiveMaximum}`);
  }
  return errors;
}

function arrayErrors(schema: JsonSchema, value: unknown[], path: string): string[] {
  const errors: string[] = [];
  if (typeof schema.minItems === "number" && value.length < schema.minItems) {
    errors.push(`${path}: fewer than ${schema.minItems} items`);
  }
  if (typeof schema.maxItems === "number" && value.length > schema.maxItems) {
    errors.push(`${path}: more than ${schema.maxItems} items`);
  }
  const items = schema.items;
  if (isSchema(items)) {
    for (const [i, v] of value.entries()) errors.push(...validateJsonSchema(items, v, `${path}[${i}]`));
  }
  return errors;
}

function objectErrors(schema: JsonSchema, value: Record<string, unknown>, path: string): string[] {
  const errors: string[] = [];
  const props = isSchema(schema.properties) ? schema.properties : {};
  const required = Array.isArray(schema.required) ? schema.required : [];
  for (const name of required) {
    if (typeof name === "string" && !(name in value)) errors.push(`${path}.${name}: is required`);
  }
  for (const [name, v] of Object.entries(value)) {
    const sub = props[name];
    if (isSchema(sub)) {
      errors.push(...validateJsonSchema(sub, v, `${path}.${name}`));
    } else if (schema.additionalProperties === false) {
      errors.push(`${path}.${name}: is not an allowed property`);
    } else if (isSchema(schema.additionalProperties)) {
      errors.push(...validateJsonSchema(schema.additionalProperties, v, `${path}.${name}`));
    }
  }
  return errors;
}

function combinatorErrors(schema: JsonSchema, value: unknown, path: string): string[] {
  const errors: string[] = [];
  if (Array.isArray(schema.allOf)) {
    for (const s of schema.allOf) if (isSchema(s)) errors.push(...validateJsonSchema(s, value, path));
  }
  const anyOf = Array.isArray(schema.anyOf) ? schema.anyOf.filter(isSchema) : [];
  if (anyOf.length > 0 && !anyOf.some((s) => validateJsonSchema(s, value, path).length === 0)) {
    errors.push(`${path}: matches none of the allowed shapes`);
  }
  const oneOf = Array.isArray(schema.oneOf) ? schema.oneOf.filter(isSchema) : [];
  if (oneOf.length > 0 && oneOf.filter((s) => validateJsonSchema(s, value, path).length === 0).length !== 1) {
    errors.push(`${path}: must match exactly one allowed shape`);
  }
  return errors;
}
