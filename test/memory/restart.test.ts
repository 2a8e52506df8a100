/**
 * Restart: a process that wrote cortex records is SIGKILLed; a new process (here: a new store and
 * memory over the same data) faults them. Both stores.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { LlmClient } from "../../src/core/llm/types.js";
import { createMemory } from "../../src/memory/memory.js";
import { BACKENDS, type Backend } from "./support/stores.js";

const noLlm: LlmClient = { complete: () => Promise.reject(new Error("no model calls in this test")) };

async function runAndKill(args: string[]): Promise<void> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", join(import.meta.dirname, "fixtures/cortex-writer.ts"), ...args],
    {
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let err = "";
  child.stderr.on("data", (d: Buffer) => {
    err += d.toString();
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout.on("data", (d: Buffer) => {
      if (d.toString().includes("written")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`writer exited (${code}) before writing: ${err}`)));
  });
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGKILL");
  await exited;
}

for (const { name, factory, skip } of BACKENDS) {
  describe.skipIf(skip)(`cortex restart on ${name}`, () => {
    let backend: Backend;
    afterEach(async () => {
      await backend.cleanup();
    });

    it("faults records written by a process that was killed", async () => {
      backend = factory("cortex-restart");
      await runAndKill([JSON.stringify(backend.options)]);
      const memory = createMemory({ store: await backend.open(), llm: noLlm });
      const page = await memory.port.fault({
        user: "discord:G1:ana",
        conversation: "discord:G1:C1:T2",
        query: "which cluster is staging? restart it",
        activeGoal: "restart the staging cluster",
        live: [],
      });
      expect(page.pinned).toContain("Ana's timezone is Europe/Lisbon");
      expect(page.retrieved).toContain("k8s-stg-42");
      expect(page.patterns).toContain("Restart staging");
      expect(page.recalled).toContain("which cluster is staging?");
    });
  });
}
