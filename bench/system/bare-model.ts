/**
 * The model call the overhead bench's baselines make (bench/system/bare-bolt.ts,
 * bench/system/chat-sdk-bot.ts): the openai SDK, streamed, usage asked for — the call Neo makes,
 * without Neo's prompt, tools or transcript.
 */
import OpenAI from "openai";

export const env = (name: string): string => {
  const v = process.env[name];
  if (!v) throw new Error(`${name}: required`);
  return v;
};

export const modelClient = () => new OpenAI({ baseURL: env("MODEL_URL"), apiKey: "sk-bench" });

/** The model's streamed answer to `text`. */
export async function ask(client: OpenAI, text: string): Promise<string> {
  const stream = await client.chat.completions.create({
    model: "gpt-4o",
    messages: [{ role: "user", content: text }],
    stream: true,
    stream_options: { include_usage: true },
  });
  let answer = "";
  for await (const chunk of stream) answer += chunk.choices[0]?.delta?.content ?? "";
  return answer;
}
