/**
 * What the fakes saw, read as answers: each platform write that carries a bench token (`ACK-…`) is
 * that message's answer, counted once per platform message however often it is edited or streamed;
 * a write without one is feedback (a status, a reaction). Feeds the ledger.
 */
import type { FakeDiscord } from "../../test/fakes/discord/fake-discord.js";
import type { FakeSlack } from "../../test/fakes/slack/fake-slack.js";
import { answeredTokens, type Ledger, observePush } from "./ledger.js";

export function observeSlack(slack: FakeSlack, ledger: Ledger): void {
  const firstSeen = createFirstSeen();
  observePush(slack.calls, (c, at) => {
    if (c.status !== 200) return;
    const key = `slack:${String(c.args.channel ?? "")}`;
    // Answers stream (a stream, or one message edited as it grows): a token counts once per message.
    const ts = WRITES_BY_RESULT.has(c.method)
      ? (c.result as { ts?: unknown } | undefined)?.ts
      : WRITES_BY_ARG.has(c.method)
        ? c.args.ts
        : undefined;
    if (ts === undefined) {
      if (c.method === "reactions.add") ledger.feedback(key, at);
      return;
    }
    const text = String(c.args.text ?? c.args.markdown_text ?? "") + JSON.stringify(c.args.chunks ?? "");
    const tokens = firstSeen(`${key}:${String(ts)}`, answeredTokens(text));
    if (tokens.length === 0) ledger.feedback(key, at);
    for (const t of tokens) ledger.answer(t, at, tokens.length);
  });
}

/** Slack methods that write a message named by their result's `ts`, and those naming it in `ts`. */
const WRITES_BY_RESULT = new Set(["chat.postMessage", "chat.startStream"]);
const WRITES_BY_ARG = new Set(["chat.update", "chat.appendStream", "chat.stopStream"]);

/** Per stack: the tokens of `tokens` not yet seen in `message` (an edit or stream append repeats them). */
function createFirstSeen(): (message: string, tokens: string[]) => string[] {
  const seenIn = new Map<string, Set<string>>();
  return (message, tokens) => {
    const seen = seenIn.get(message) ?? new Set<string>();
    seenIn.set(message, seen);
    const fresh = tokens.filter((t) => !seen.has(t));
    for (const t of fresh) seen.add(t);
    return fresh;
  };
}

export function observeDiscord(discord: FakeDiscord, ledger: Ledger): void {
  const firstSeen = createFirstSeen();
  observePush(discord.calls, (c, at) => {
    const m = /^\/channels\/(\d+)\/(typing|messages)(?:\/\d+)?$/.exec(c.path);
    if (!m || c.status >= 300) return;
    const key = `discord:${m[1]}`;
    const content = (c.body as { content?: unknown } | null)?.content;
    // A create names its message in the response, an edit in the path; answers are edited as they stream.
    const message =
      m[2] === "messages" ? (c.path.split("/")[4] ?? (c.response as { id?: unknown } | null)?.id) : undefined;
    const tokens =
      message !== undefined && typeof content === "string"
        ? firstSeen(`${key}:${String(message)}`, answeredTokens(content))
        : [];
    if (tokens.length === 0) ledger.feedback(key, at);
    for (const t of tokens) ledger.answer(t, at, tokens.length);
  });
}
