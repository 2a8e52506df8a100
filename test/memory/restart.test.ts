/**
 * Restart: a process that wrote cortex records is SIGKILLed; a new process (here: a new store and
 * memory over the same data) faults them. Both stores.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { LlmClient } from "../../src/core/llm/types.js";
import { createMemory } from "../../src/memory/memory.js";
import { killAfterWrite } from "./support/kill-after-write.js";
import { BACKENDS, type Backend } from "./support/stores.js";

const noLlm: LlmClient = { complete: () => Promise.reject(new Error("no model calls in this test")) };

const runAndKill = (args: string[]) => killAfterWrite("cortex-writer.ts", args);

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
        place: { kind: "public", workspace: "G1" },
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
