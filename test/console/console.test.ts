import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type ScriptedOpenAI, startScriptedOpenAI } from "../support/scripted-openai.js";

let ep: ScriptedOpenAI | null = null;
const children: ChildProcessWithoutNullStreams[] = [];
afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill("SIGKILL");
  await ep?.close();
  ep = null;
});

/** Only what a shell needs: no OPENAI_* or platform tokens leak in from the test environment. */
function baseEnv(extra: Record<string, string>): Record<string, string> {
  const dataDir = mkdtempSync(join(tmpdir(), "neo-console-"));
  return {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "/tmp",
    NEO_DATA_DIR: dataDir,
    NEO_ENV_FILE: "off",
    ...extra,
  };
}

interface Run {
  child: ChildProcessWithoutNullStreams;
  stdout: () => string;
  stderr: () => string;
  exit: Promise<number | null>;
  /** Resolves once `stream` has printed text matching `re`. */
  waitFor: (stream: "stdout" | "stderr", re: RegExp) => Promise<void>;
}

function start(command: string[], env: Record<string, string>): Run {
  const child = spawn(command[0]!, command.slice(1), { env: baseEnv(env), cwd: process.cwd() });
  children.push(child);
  const out = { stdout: "", stderr: "" };
  const waiters: Array<{ stream: "stdout" | "stderr"; re: RegExp; resolve: () => void }> = [];
  const check = () => {
    for (const w of [...waiters]) {
      if (w.re.test(out[w.stream])) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  };
  child.stdout.on("data", (d: Buffer) => {
    out.stdout += d.toString();
    check();
  });
  child.stderr.on("data", (d: Buffer) => {
    out.stderr += d.toString();
    check();
  });
  const exit = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return {
    child,
    stdout: () => out.stdout,
    stderr: () => out.stderr,
    exit,
    waitFor: (stream, re) =>
      new Promise((resolve) => {
        waiters.push({ stream, re, resolve });
        check();
      }),
  };
}

describe("console chat (npm start without a platform token)", () => {
  it("answers a line typed on stdin on stdout, using the endpoint in OPENAI_BASE_URL", async () => {
    ep = await startScriptedOpenAI([
      {
        match: (r) => r.purpose === "turn",
        expect: (r) => {
          expect(r.messages).toEqual([{ role: "user", content: "what is 2+2?" }]);
          // The real tool surface is wired: the default manifest's filesystem server and the synthetic tools.
          const names = r.tools.map((t) => t.function.name);
          expect(names).toContain("core_execute");
          expect(names).toContain("memory_recall");
          expect(names.some((n) => n.startsWith("fs__"))).toBe(true);
        },
        reply: { text: "2+2 is 4." },
      },
      // The cortex is wired too: the finished turn is consolidated before the process exits.
      {
        match: (r) => r.purpose === "writeback",
        reply: { text: JSON.stringify({ conversations: [] }) },
      },
    ]);
    const run = start(["npx", "tsx", "src/main.ts"], { OPENAI_BASE_URL: ep.url });
    await run.waitFor("stderr", /Type a message/);
    run.child.stdin.write("what is 2+2?\n");
    await run.waitFor("stdout", /2\+2 is 4\./);
    run.child.stdin.end();
    expect(await run.exit).toBe(0);
    expect(run.stdout()).toBe("2+2 is 4.\n");
  });

  it("Ctrl-C cancels the running turn (aborting the model request), a second Ctrl-C exits cleanly", async () => {
    ep = await startScriptedOpenAI([{ reply: { kind: "hang" } }]);
    const run = start([process.execPath, "--import", "tsx", "src/main.ts"], { OPENAI_BASE_URL: ep.url });
    await run.waitFor("stderr", /Type a message/);
    run.child.stdin.write("write a novel\n");
    await ep.waitForRequest(1);
    run.child.kill("SIGINT");
    await ep.waitForAbort(1);
    await run.waitFor("stderr", /Cancelled\./);
    run.child.kill("SIGINT");
    expect(await run.exit).toBe(0);
    expect(run.stdout()).toBe("");
  });

  it("with neither OPENAI_BASE_URL nor OPENAI_API_KEY, exits with one line naming the variable", async () => {
    const run = start(["npx", "tsx", "src/main.ts"], {});
    expect(await run.exit).toBe(1);
    const lines = run
      .stderr()
      .split("\n")
      .filter((l) => l && !l.startsWith("npm warn"));
    expect(lines).toEqual([
      "OPENAI_API_KEY: set it to use OpenAI, or set OPENAI_BASE_URL to a local OpenAI-compatible server (Ollama, vLLM)",
    ]);
  });

  it("a bad value exits with the config error's one line", async () => {
    const run = start(["npx", "tsx", "src/main.ts"], { OPENAI_API_KEY: "sk-x", NEO_CONTEXT_WINDOW: "lots" });
    expect(await run.exit).toBe(1);
    const lines = run
      .stderr()
      .split("\n")
      .filter((l) => l && !l.startsWith("npm warn"));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^NEO_CONTEXT_WINDOW: .*got "lots"/);
  });

  it("reads the env file (NEO_ENV_FILE, default .env) for variables the environment does not set", async () => {
    const envFile = join(mkdtempSync(join(tmpdir(), "neo-envfile-")), "neo.env");
    writeFileSync(
      envFile,
      "OPENAI_API_KEY=sk-from-file\nNEO_CONTEXT_WINDOW=plenty\nNEO_MAIN_MODEL=from-file\n",
    );
    const run = start(["npx", "tsx", "src/main.ts"], { NEO_ENV_FILE: envFile, NEO_MAIN_MODEL: "from-env" });
    expect(await run.exit).toBe(1);
    // The key came from the file (no "set OPENAI_API_KEY" line); its bad window is reported.
    expect(run.stderr()).toMatch(/^NEO_CONTEXT_WINDOW: .*got "plenty"/m);
  });
});
