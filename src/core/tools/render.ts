/**
 * MCP tool results -> the one string the model sees. Text stays verbatim; images, audio, resources
 * and structured content become short, honest text; oversized results are cut with a marker.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { OutboundFile } from "../reporter.js";

type Block = CallToolResult["content"][number];

function base64Bytes(data: string): number {
  const pad = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - pad);
}

function renderBlock(block: Block): string {
  switch (block.type) {
    case "text":
      return block.text;
    case "image":
      return `[image ${block.mimeType}, ${base64Bytes(block.data)} bytes]`;
    case "audio":
      return `[audio ${block.mimeType}, ${base64Bytes(block.data)} bytes]`;
    case "resource_link":
      return `[resource link ${block.uri}${block.name ? ` "${block.name}"` : ""}${block.mimeType ? ` (${block.mimeType})` : ""}]`;
    case "resource": {
      const r = block.resource;
      const head = `[resource ${r.uri}${r.mimeType ? ` (${r.mimeType})` : ""}]`;
      if ("text" in r && typeof r.text === "string") return `${head}\n${r.text}`;
      if ("blob" in r && typeof r.blob === "string") return `${head} ${base64Bytes(r.blob)} bytes`;
      return head;
    }
    default:
      return `[${(block as { type: string }).type} content]`;
  }
}

/** Render a result's content blocks; structured content is added when no text block carries it. */
export function renderResult(result: CallToolResult): string {
  const blocks = Array.isArray(result.content) ? result.content : [];
  const parts = blocks.map(renderBlock);
  const hasText = blocks.some((b) => b.type === "text" && b.text.length > 0);
  if (result.structuredContent !== undefined && !hasText) {
    parts.push(JSON.stringify(result.structuredContent));
  }
  return parts.join("\n");
}

const EXT: Record<string, string> = {
  "image/png": "png",
  "image/jpeg": "jpg",
  "image/gif": "gif",
  "image/webp": "webp",
  "image/svg+xml": "svg",
  "application/pdf": "pdf",
  "text/csv": "csv",
};

/**
 * The files in a result for the user: each image, and each resource that carries a blob, named
 * after the resource's URI or `<tool>-<n>.<ext>`. Text resources stay text (the model reads them).
 */
export function resultFiles(result: CallToolResult, tool: string): OutboundFile[] {
  const blocks = Array.isArray(result.content) ? result.content : [];
  const out: OutboundFile[] = [];
  for (const b of blocks) {
    if (b.type === "image") {
      const ext = EXT[b.mimeType] ?? "bin";
      out.push({
        name: `${tool}-${out.length + 1}.${ext}`,
        type: b.mimeType,
        bytes: Buffer.from(b.data, "base64"),
      });
    } else if (b.type === "resource" && "blob" in b.resource && typeof b.resource.blob === "string") {
      const type = b.resource.mimeType ?? "application/octet-stream";
      const base = b.resource.uri.split(/[/?#]/).filter(Boolean).at(-1) ?? "";
      const name = /\.\w+$/.test(base) ? base : `${tool}-${out.length + 1}.${EXT[type] ?? "bin"}`;
      out.push({ name, type, bytes: Buffer.from(b.resource.blob, "base64") });
    }
  }
  return out;
}

/** Cut `text` to `max` characters, followed by a marker saying how much was cut. */
export function truncateResult(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.length - max;
  return `${text.slice(0, max)}\n[… ${cut} of ${text.length} characters cut]`;
}

/** A tool's progress as its Status line: `• name: 3 of 10, message` (the server's message cut). */
export function renderProgress(
  name: string,
  p: { progress: number; total?: number | undefined; message?: string | undefined },
): string {
  const count = p.total !== undefined ? `${p.progress} of ${p.total}` : `${p.progress}`;
  const message = p.message?.replace(/\s+/g, " ").trim().slice(0, 200);
  return `• ${name}: ${count}${message ? `, ${message}` : ""}`;
}
