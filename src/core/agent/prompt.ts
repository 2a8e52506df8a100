/**
 * The system block, composed fresh on every iteration (seed: buildSystem). It is never stored, so
 * it cannot drift: charter, embedded ground truth, pinned block, summary, recalled turns, retrieved
 * memory, patterns, and the budget stat last.
 */
import { readFileSync } from "node:fs";
import type { MemoryPage } from "../memory-port.js";

/** Ground truth shipped with the code (`knowledge.md`, copied into dist/ by the build). */
export const KNOWLEDGE = readFileSync(new URL("./knowledge.md", import.meta.url), "utf8").trim();

export const CHARTER = `You are Neo, an assistant that gets things done with tools.
How you work: think briefly, call tools when they help, read their results, and answer when you have what the user needs. Prefer one well-chosen tool call over many guesses; if a tool returns an error, read it and adapt your approach instead of repeating the same call.
Money: you never move value yourself. Every payment, transfer, swap or other spend goes through core_execute and waits for the requesting user's explicit approval. Never claim something was sent unless a tool result shows it, and quote transaction ids exactly.
Media: you read and write text. Describe links and files by what tools tell you; never invent their contents.
Voice: be direct and concise. Use Markdown sparingly. Say plainly what you did, what you could not do, and why.`;

export interface SystemParts {
  page: MemoryPage;
  activeGoal: string;
  summary: string | null;
}

function section(title: string, body: string): string {
  return body.trim() ? `\n\n## ${title}\n${body.trim()}` : "";
}

/** Everything but the budget stat (which is computed from this text plus the transcript). */
export function buildSystemBody(p: SystemParts): string {
  const pinned = [p.page.pinned.trim(), p.activeGoal ? `Active goal: ${p.activeGoal}` : ""]
    .filter(Boolean)
    .join("\n");
  const memoryNote = p.page.unavailable
    ? "Memory is unavailable right now; say so if the user asks about it."
    : "";
  return (
    CHARTER +
    section("Ground truth", KNOWLEDGE) +
    section("Pinned", pinned) +
    section("Consolidated summary of earlier conversation", p.summary ?? "") +
    section("Recalled turns", p.page.recalled) +
    section("Retrieved memory", [memoryNote, p.page.retrieved].filter(Boolean).join("\n")) +
    section("Procedural patterns", p.page.patterns)
  );
}

export function withBudgetStat(body: string, pct: number): string {
  return `${body}\n\n[context: ${pct}% used]`;
}
