/**
 * Model Markdown → Slack mrkdwn. Every character the model wrote is escaped (`&`, `<`, `>`), so no
 * output can form `<!channel>`, `<!here>`, `<!everyone>`, `<!subteam^…>` or `<@U…>`; the only
 * angle-bracket syntax in the result is links this module builds from Markdown links.
 */

/** Slack's three control characters, escaped as Slack documents. */
export function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** Break bare `@channel`-style words so no client or `link_names` setting turns them into pings. */
function defuseBroadcasts(text: string): string {
  return text.replace(/@(channel|here|everyone)\b/gi, "@\u200b$1");
}

const SAFE_URL = /^(https?:\/\/|mailto:)[^\s<>|]+$/i;

/** Inline formatting of one line that is not code. Placeholders keep produced markup out of reach. */
function inline(line: string): string {
  const held: string[] = [];
  const hold = (s: string) => `\u0000${held.push(s) - 1}\u0000`;
  let out = line.replace(/`([^`]+)`/g, (_m, code: string) => hold(`\`${escapeMrkdwn(code)}\``));
  out = out.replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, (m, label: string, url: string) =>
    SAFE_URL.test(url)
      ? hold(`<${url.replace(/&/g, "&amp;")}|${escapeMrkdwn(label).replace(/\|/g, "¦")}>`)
      : m,
  );
  out = defuseBroadcasts(escapeMrkdwn(out));
  out = out
    .replace(/\*\*(?=\S)(.+?)(?<=\S)\*\*/g, (_m, t: string) => hold(`*${t}*`))
    .replace(/__(?=\S)(.+?)(?<=\S)__/g, (_m, t: string) => hold(`*${t}*`))
    .replace(/(?<![*\w])\*(?=\S)([^*]+?)(?<=\S)\*(?![*\w])/g, (_m, t: string) => hold(`_${t}_`))
    .replace(/~~(?=\S)(.+?)(?<=\S)~~/g, (_m, t: string) => hold(`~${t}~`));
  // Restore innermost-last: a held piece may itself contain placeholders.
  for (let i = held.length - 1; i >= 0; i--) out = out.split(`\u0000${i}\u0000`).join(held[i]!);
  return out;
}

/** Convert Markdown to mrkdwn: fences, inline code, links, bold, italics, strikes, headings, lists. */
export function markdownToMrkdwn(markdown: string): string {
  const lines = markdown.replace(/\r\n?/g, "\n").split("\n");
  const out: string[] = [];
  let inFence = false;
  for (const line of lines) {
    const fence = /^\s*(```|~~~)/.exec(line);
    if (fence) {
      // Slack ignores language hints and shows them as code; drop them.
      out.push("```");
      inFence = !inFence;
      continue;
    }
    if (inFence) {
      out.push(escapeMrkdwn(line));
      continue;
    }
    const heading = /^#{1,6}\s+(.*)$/.exec(line);
    if (heading) {
      out.push(`*${inline(heading[1]!.replace(/\*\*/g, ""))}*`);
      continue;
    }
    const bullet = /^(\s*)[-*+]\s+(.*)$/.exec(line);
    if (bullet) {
      const depth = Math.floor(bullet[1]!.replace(/\t/g, "  ").length / 2);
      out.push(`${"    ".repeat(depth)}• ${inline(bullet[2]!)}`);
      continue;
    }
    const numbered = /^(\s*)(\d+)[.)]\s+(.*)$/.exec(line);
    if (numbered) {
      const depth = Math.floor(numbered[1]!.replace(/\t/g, "  ").length / 2);
      out.push(`${"    ".repeat(depth)}${numbered[2]}. ${inline(numbered[3]!)}`);
      continue;
    }
    if (/^\s*([-*_])\s*\1\s*\1[\s\-*_]*$/.test(line)) {
      out.push("──────────");
      continue;
    }
    const quote = /^>\s?(.*)$/.exec(line);
    if (quote) {
      out.push(`>${inline(quote[1]!)}`);
      continue;
    }
    out.push(inline(line));
  }
  if (inFence) out.push("```");
  return out.join("\n");
}
