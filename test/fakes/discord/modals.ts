/**
 * Discord's documented limits on a modal (interaction callback type 9), checked by the fake so a
 * modal Discord would refuse is refused here too:
 * https://discord.com/developers/docs/interactions/receiving-and-responding#interaction-response-object-modal
 * (title ≤ 45, 1–5 components) and
 * https://discord.com/developers/docs/components/reference#text-input (custom_id ≤ 100,
 * label ≤ 45, placeholder ≤ 100, value ≤ 4000).
 */
export function modalProblem(data: Record<string, unknown>): string | undefined {
  const title = data.title;
  if (typeof title !== "string" || title.length < 1 || title.length > 45) return "title: 1-45 characters";
  if (typeof data.custom_id !== "string" || data.custom_id.length > 100) return "custom_id: at most 100";
  const rows = data.components;
  if (!Array.isArray(rows) || rows.length < 1 || rows.length > 5) return "components: 1-5 action rows";
  for (const [n, row] of rows.entries()) {
    const inputs = (row as { type?: number; components?: unknown[] }).components;
    if ((row as { type?: number }).type !== 1 || !Array.isArray(inputs) || inputs.length !== 1)
      return `components.${n}: an action row of one text input`;
    const t = inputs[0] as Record<string, unknown>;
    if (t.type !== 4) return `components.${n}.components.0.type: must be 4 (text input)`;
    if (typeof t.custom_id !== "string" || t.custom_id.length < 1 || t.custom_id.length > 100)
      return `components.${n}.components.0.custom_id: 1-100 characters`;
    if (typeof t.label !== "string" || t.label.length < 1 || t.label.length > 45)
      return `components.${n}.components.0.label: 1-45 characters`;
    if (typeof t.placeholder === "string" && t.placeholder.length > 100)
      return `components.${n}.components.0.placeholder: at most 100`;
    if (typeof t.value === "string" && t.value.length > 4000)
      return `components.${n}.components.0.value: at most 4000`;
  }
  return undefined;
}
