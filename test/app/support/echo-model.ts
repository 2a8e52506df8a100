/**
 * What the Discord e2e tests of the process share: a scripted model that answers every turn with
 * `answer to: <the user's last message>` (speaker prefix dropped) and every write-back with
 * "nothing durable", and the text of a recorded Discord message post.
 */
import type { RecordedCall } from "../../fakes/discord/fake-discord.js";
import type { ScriptedOpenAI, ScriptedRequest } from "../../support/scripted-openai.js";

const lastUser = (r: ScriptedRequest) =>
  String(r.messages.filter((m) => m.role === "user").pop()?.content ?? "");

export function answerEveryTurn(ep: ScriptedOpenAI): void {
  ep.fallback((r) =>
    r.purpose === "turn"
      ? { text: `answer to: ${lastUser(r).replace(/^[^:]*: /, "")}` }
      : { text: JSON.stringify({ conversations: [] }) },
  );
}

/** The `content` of a recorded Discord REST call's body, if any. */
export const content = (c: RecordedCall): string | undefined =>
  (c.body as { content?: string } | undefined)?.content;
