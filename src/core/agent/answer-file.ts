/**
 * Whether an answer is sent as a file, decided once for every platform: an answer longer than
 * `maxChars` goes whole as `answer.md`, with its beginning as the message; otherwise each fenced
 * code block longer than `codeLines` lines goes as a file with its language's extension, and the
 * message is the answer with a line naming the file in the block's place. Reading four chat
 * messages in a row, or scrolling a long snippet, is worse than opening one file.
 */
import type { OutboundFile } from "../reporter.js";

export interface AnswerFileLimits {
  /** Answers longer than this (characters) go as `answer.md`; 0 = never. */
  maxChars: number;
  /** Code blocks longer than this (lines) go as files; 0 = never. */
  codeLines: number;
}

/** About four Discord messages; a code block that fills more than a screen. */
export const DEFAULT_ANSWER_FILE_LIMITS: AnswerFileLimits = { maxChars: 8000, codeLines: 60 };

export interface AnswerFile {
  files: OutboundFile[];
  /** What is said in the conversation beside the files. */
  message: string;
}

/** Characters of the answer's beginning shown beside `answer.md` (at most half the length limit). */
const LEAD_CHARS = 400;

export const UPLOAD_FAILED_NOTE = "*(I could not attach this as a file, so here it is as text.)*";

/** Past this length the answer will go as a file, whatever else it holds (streaming stops showing it). */
export function beyondMessageLength(text: string, limits: AnswerFileLimits): boolean {
  return limits.maxChars > 0 && text.length > limits.maxChars;
}

/** The files and message for `text`, or null when it is said as it is. */
export function answerFile(text: string, limits: AnswerFileLimits): AnswerFile | null {
  if (beyondMessageLength(text, limits)) {
    return {
      files: [textFile("answer.md", "text/markdown", text)],
      message:
        `${lead(text, Math.min(LEAD_CHARS, Math.floor(limits.maxChars / 2)))}\n\n*(The full answer is attached as answer.md.)*`.trim(),
    };
  }
  if (limits.codeLines <= 0) return null;
  const files: OutboundFile[] = [];
  const message = text.replace(FENCE, (block, lang: string, body: string) => {
    if (body.split("\n").length <= limits.codeLines) return block;
    const ext = extensionOf(lang);
    const name = files.length === 0 ? `code.${ext}` : `code-${files.length + 1}.${ext}`;
    files.push(textFile(name, "text/plain", `${body}\n`));
    return `*(${lang || "Code"}, ${body.split("\n").length} lines: attached as ${name}.)*`;
  });
  return files.length ? { files, message } : null;
}

/** A fenced block: opening fence with an optional info string, body, closing fence on its own line. */
const FENCE = /^```[ \t]*([\w+#.-]*)[^\n]*\n([\s\S]*?)\n```[ \t]*$/gm;

const textFile = (name: string, type: string, text: string): OutboundFile => ({
  name,
  type,
  bytes: Buffer.from(text, "utf8"),
});

/** The answer's first paragraphs up to `max` characters, never into a code block. */
function lead(text: string, max: number): string {
  let out = "";
  for (const para of text.split(/\n{2,}/)) {
    if (para.trimStart().startsWith("```")) break;
    const next = out ? `${out}\n\n${para}` : para;
    if (next.length > max) {
      if (!out) {
        const cut = para.slice(0, max);
        out = `${cut.slice(0, Math.max(cut.lastIndexOf(" "), max / 2))}…`;
      }
      break;
    }
    out = next;
  }
  return out;
}

const EXTENSIONS: Record<string, string> = {
  js: "js",
  javascript: "js",
  jsx: "jsx",
  ts: "ts",
  typescript: "ts",
  tsx: "tsx",
  py: "py",
  python: "py",
  rb: "rb",
  ruby: "rb",
  go: "go",
  rs: "rs",
  rust: "rs",
  java: "java",
  kotlin: "kt",
  kt: "kt",
  swift: "swift",
  c: "c",
  h: "h",
  cpp: "cpp",
  "c++": "cpp",
  cs: "cs",
  csharp: "cs",
  php: "php",
  sh: "sh",
  bash: "sh",
  shell: "sh",
  zsh: "sh",
  ps1: "ps1",
  powershell: "ps1",
  sql: "sql",
  json: "json",
  yaml: "yaml",
  yml: "yaml",
  toml: "toml",
  xml: "xml",
  html: "html",
  css: "css",
  md: "md",
  markdown: "md",
  diff: "diff",
  csv: "csv",
  dockerfile: "dockerfile",
};

function extensionOf(lang: string): string {
  return EXTENSIONS[lang.toLowerCase()] ?? "txt";
}
