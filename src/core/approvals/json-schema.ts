/**
 * Tool arguments checked against the tool's own JSON schema with ajv (the validator the MCP SDK
 * uses too, with the same standard formats). Planned tool calls are checked before a plan exists;
 * the errors are readable lines the planner is shown ("arguments.amount: must be string").
 */
import { createRequire } from "node:module";
import type { Ajv, ErrorObject, ValidateFunction } from "ajv";

export type JsonSchema = Record<string, unknown>;

const requireCjs = createRequire(import.meta.url);
let loaded: Ajv | undefined;

/**
 * The validator, loaded at the first check rather than at start-up: ajv and its formats are about
 * 1.5 MB of heap that a process whose model never plans a tool call (no MCP server) does not need,
 * and the live heap at start-up is what V8 sizes its heap headroom by (~3x). Both are CommonJS, so
 * `require` loads them synchronously and the check stays synchronous.
 *
 * Tool schemas come from MCP servers, so they are taken as they are: unknown keywords and formats
 * ignored (strict off, no meta-schema check), every error reported, nothing printed by ajv itself.
 */
function ajv(): Ajv {
  if (!loaded) {
    const { Ajv: AjvClass } = requireCjs("ajv") as typeof import("ajv");
    // ajv-formats is CommonJS: its export is the plugin function.
    const addFormats = requireCjs("ajv-formats") as (ajv: Ajv) => Ajv;
    loaded = addFormats(
      new AjvClass({ strict: false, validateSchema: false, allErrors: true, logger: false }),
    );
  }
  return loaded;
}

/** One compiled validator per schema object (tool schemas live as long as their tool list). */
const compiled = new WeakMap<JsonSchema, ValidateFunction>();

function validatorFor(checker: Ajv, schema: JsonSchema): ValidateFunction {
  let v = compiled.get(schema);
  if (!v) {
    // `$schema` may name a draft ajv does not load, and `$id` would collide across servers.
    const { $schema: _draft, $id: _id, ...body } = schema;
    v = checker.compile(body);
    compiled.set(schema, v);
  }
  return v;
}

/** `/legs/0/to` → `arguments.legs[0].to`. */
function pathOf(root: string, instancePath: string): string {
  return instancePath
    .split("/")
    .slice(1)
    .map((seg) => seg.replace(/~1/g, "/").replace(/~0/g, "~"))
    .reduce((p, seg) => (/^\d+$/.test(seg) ? `${p}[${seg}]` : `${p}.${seg}`), root);
}

function describe(root: string, e: ErrorObject): string | undefined {
  const at = pathOf(root, e.instancePath);
  switch (e.keyword) {
    case "required":
      return `${at}.${String(e.params.missingProperty)}: is required`;
    case "additionalProperties":
      return `${at}.${String(e.params.additionalProperty)}: is not an allowed property`;
    case "enum":
      return `${at}: must be one of ${JSON.stringify(e.params.allowedValues)}`;
    case "if":
      return undefined; // the failing branch's own errors say what is wrong
    default:
      return `${at}: ${e.message ?? e.keyword}`;
  }
}

/** Validate `value` against `schema`; returns readable errors, none when it is valid. */
export function validateJsonSchema(schema: JsonSchema, value: unknown, root = "arguments"): string[] {
  // Outside the try: ajv failing to load is not a problem of the tool's schema.
  const checker = ajv();
  let validate: ValidateFunction;
  try {
    validate = validatorFor(checker, schema);
  } catch (err) {
    return [`${root}: the tool's schema cannot be used to check them (${(err as Error).message})`];
  }
  if (validate(value)) return [];
  const lines = (validate.errors ?? []).map((e) => describe(root, e)).filter((l): l is string => !!l);
  return [...new Set(lines)];
}
