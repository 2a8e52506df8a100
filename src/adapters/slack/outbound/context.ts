/**
 * What every group of outbound calls shares in one workspace: the Web API client, the tiers, the
 * bot token (read when a call goes), and the rate gate, keyed by team and method (and channel, for
 * per-channel methods: tiers are per workspace, so gate keys carry the team).
 */
import type { webApi } from "@slack/bolt";
import type { RateRule } from "../rate-gate/key-state.js";
import type { RateGate, Reservation } from "../rate-gate.js";
import type { SlackRateRules } from "./rules.js";

export type WebClient = webApi.WebClient;

/**
 * How one call takes its room (rate-gate.ts): `optional` calls are cosmetic and dropped when their
 * method has no room now; a `reservation` (from `reserve`, same method) is room taken earlier;
 * `skip` drops a call that is no longer wanted when it is about to go.
 */
export interface CallOptions {
  skip?: () => boolean;
  optional?: boolean;
  reservation?: Reservation;
}

export interface OutboundContext {
  client: WebClient;
  rules: SlackRateRules;
  token: () => Promise<string>;
  /** The gate key of a workspace-wide method (`scope`: a per-channel one's channel). */
  keyOf(method: string, scope?: string): string;
  /** Run `call` through the gate under `method`'s key; undefined when skipped or (optional) dropped. */
  gated<T>(
    method: string,
    rule: RateRule,
    call: () => Promise<T>,
    opts?: CallOptions,
    scope?: string,
  ): Promise<T | undefined>;
  /** `method`'s next required call (in `scope`) comes soon: its room is asked for now (`RateGate.ahead`). */
  ahead(method: string, rule: RateRule, scope?: string): void;
}

export function createOutboundContext(o: {
  client: WebClient;
  rules: SlackRateRules;
  gate: RateGate;
  team: string;
  token: () => Promise<string>;
}): OutboundContext {
  const { client, rules, gate, team, token } = o;
  const keyOf = (method: string, scope?: string) => `${team}:${method}${scope ? `:${scope}` : ""}`;
  return {
    client,
    rules,
    token,
    keyOf,
    gated: (method, rule, call, opts = {}, scope) =>
      gate.run({ key: keyOf(method, scope), method, rule, call, ...opts }),
    ahead: (method, rule, scope) => gate.ahead(keyOf(method, scope), rule),
  };
}
