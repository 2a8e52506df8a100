/**
 * The console's one reader of stdin. A pending question (`ask`, used by the console approval
 * channel) takes the next line; every other line is a chat message. One reader means a typed
 * "y" can never be taken for a chat message, nor a message for an approval.
 */
import { createInterface, type Interface } from "node:readline";
import type { Readable, Writable } from "node:stream";

export interface LineRouter {
  /** Print `prompt` and resolve with the next line, or null once input has ended. */
  ask(prompt: string): Promise<string | null>;
  /** Receive every line no question is waiting for. */
  onLine(handler: (line: string) => void): void;
  /** Input ended (EOF). */
  onEnd(handler: () => void): void;
  /** Ctrl-C typed on a terminal (readline swallows the signal in raw mode). */
  onInterrupt(handler: () => void): void;
  close(): void;
}

export function createLineRouter(input: Readable, output: Writable): LineRouter {
  const terminal = Boolean((input as Readable & { isTTY?: boolean }).isTTY);
  const rl: Interface = createInterface({ input, output, terminal });
  const waiting: Array<(line: string | null) => void> = [];
  let lineHandler: (line: string) => void = () => {};
  let ended = false;
  rl.on("line", (line) => {
    const question = waiting.shift();
    if (question) question(line);
    else lineHandler(line);
  });
  rl.on("close", () => {
    ended = true;
    for (const w of waiting.splice(0)) w(null);
  });
  return {
    ask(prompt) {
      if (ended) return Promise.resolve(null);
      output.write(prompt);
      return new Promise((resolve) => waiting.push(resolve));
    },
    onLine: (h) => {
      lineHandler = h;
    },
    onEnd: (h) => {
      if (ended) h();
      else rl.on("close", h);
    },
    onInterrupt: (h) => {
      rl.on("SIGINT", h);
    },
    close: () => rl.close(),
  };
}
