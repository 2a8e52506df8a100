/**
 * The one place a tool call is rendered for people (Status lines, partial answers, logs).
 */

/** `• name` — the seed's Status line for a tool call. */
export function renderToolCall(name: string): string {
  return `• ${name}`;
}
