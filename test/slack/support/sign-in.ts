/**
 * Neo on Slack with per-person OAuth servers, for the chat sign-in tests: the real MCP surface over
 * a manifest and its OAuth connections, `/neo connections`, each turn's sign-in check; and `/neo`
 * as Slack sends it.
 */
import { expect } from "vitest";
import { connectionCommands } from "../../../src/app/command-deps.js";
import { signInPort } from "../../../src/core/agent/sign-in.js";
import type { Manifest } from "../../../src/core/tools/manifest.js";
import type { OAuthConnections } from "../../../src/core/tools/oauth/sign-in-types.js";
import { createToolSurface, type McpToolSurface } from "../../../src/core/tools/surface.js";
import { type Harness, type HarnessOptions, slashCommand, startHarness } from "./harness.js";

/** `/neo <text>` as Slack sends it; the ephemeral reply's text. */
export async function neo(
  h: Harness,
  user: string,
  text: string,
  channel = "C1",
): Promise<string | undefined> {
  const res = await h.slack.command(slashCommand(h.fake.baseUrl, user, text, channel));
  expect(res.status).toBe(200);
  const reply = JSON.parse(res.body) as { response_type?: string; text?: string };
  expect(reply.response_type).toBe("ephemeral");
  return reply.text;
}

/** Neo over `manifest`'s servers signed in through `oauth`, their placeholders filled from `env`. */
export async function startNeo(
  {
    manifest,
    oauth,
    env = {},
  }: { manifest: Manifest; oauth: OAuthConnections; env?: Record<string, string> },
  extra: HarnessOptions = {},
): Promise<Harness> {
  let surface: McpToolSurface | undefined;
  return startHarness({
    adminIds: ["UADMIN"],
    ...extra,
    surface: async () => {
      surface = await createToolSurface({
        manifest,
        oauth,
        env,
        resultMaxChars: 2000,
        callTimeoutMs: 10_000,
      });
      return surface;
    },
    connections: connectionCommands(oauth),
    signIn: signInPort(oauth, { listFor: (u, un) => surface!.listFor(u, un) }),
  });
}

/** The texts of the ephemerals `user` was sent (a note's blocks, a link's URL included). */
export function ephemeralsTo(h: Harness, user: string): string[] {
  return h.fake
    .callsTo("chat.postEphemeral")
    .filter((c) => c.args.user === user)
    .map((c) => JSON.stringify(c.args.blocks ?? c.args.text));
}
