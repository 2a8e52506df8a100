// `node --import ./scripts/conformance/node20.mjs`: lets @modelcontextprotocol/conformance (which
// imports `globSync` from `fs`, Node 22+) load on Node 20. Does nothing where `fs` has `globSync`.
import fs from "node:fs";
import { register } from "node:module";

if (typeof fs.globSync !== "function") register("./fs-hooks.mjs", import.meta.url);
