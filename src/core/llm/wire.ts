/**
 * The request builder: the one place a transcript becomes the messages of a request. The
 * transcript may hold consecutive user messages (other people's messages in a thread, messages
 * queued while a turn ran, the next message after a cancelled turn, the note of a resumed turn);
 * strict chat templates (open-weight models as vLLM serves them) refuse `user, user`, so each run
 * of user messages is sent as one, their texts separated by a blank line. The transcript itself is
 * never rewritten: merging is a pure function of it, so consecutive requests still extend each
 * other (prefix consistency) as long as the transcript only grows.
 *
 * Images: a user message whose attached image is still kept (`images`, for the turn it arrived
 * in) is sent as a content array: its text, then one `image_url` part per image. Once released,
 * the same message is sent as its text alone (which names the image), the one way a request may
 * differ from the previous one's prefix without a compaction. A user message's `speaker` is never
 * sent (its name is already in the text where several people speak).
 */
import type {
  ChatCompletionContentPart,
  ChatCompletionMessageParam,
} from "openai/resources/chat/completions";
import type { Message } from "./types.js";

/** Between the texts of merged user messages. */
export const USER_MESSAGE_JOIN = "\n\n";

/** `messages` with every run of consecutive user messages merged into one (their files joined). */
export function mergeUserRuns(messages: readonly Message[]): Message[] {
  const out: Message[] = [];
  for (const m of messages) {
    const prev = out.at(-1);
    if (m.role === "user" && prev?.role === "user") {
      const files = [...(prev.files ?? []), ...(m.files ?? [])];
      out[out.length - 1] = {
        role: "user",
        content: `${prev.content}${USER_MESSAGE_JOIN}${m.content}`,
        ...(files.length ? { files } : {}),
      };
    } else out.push(m);
  }
  return out;
}

function toWire(m: Message, images: ReadonlyMap<string, string>): ChatCompletionMessageParam {
  if (m.role !== "user") return m as ChatCompletionMessageParam;
  const urls = (m.files ?? [])
    .filter((f) => f.attached && f.sha256 && images.has(f.sha256))
    .map((f) => images.get(f.sha256!)!);
  if (urls.length === 0) return { role: "user", content: m.content };
  const parts: ChatCompletionContentPart[] = [
    { type: "text", text: m.content },
    ...urls.map((url) => ({ type: "image_url" as const, image_url: { url } })),
  ];
  return { role: "user", content: parts };
}

/**
 * The system block's head, the transcript as the endpoint receives it, then the block's tail
 * (`context`) when there is one: everything before the tail is the same for the next request of the
 * thread, plus what it appends, which is what prompt caches reuse.
 */
export function requestMessages(
  system: string,
  messages: readonly Message[],
  images: ReadonlyMap<string, string> = new Map(),
  context?: string,
): ChatCompletionMessageParam[] {
  return [
    { role: "system", content: system },
    ...mergeUserRuns(messages).map((m) => toWire(m, images)),
    ...(context ? [{ role: "system" as const, content: context }] : []),
  ];
}
