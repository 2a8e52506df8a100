import { describe, expect, it, vi } from "vitest";
import { createEditCoalescer, createPacer } from "../../src/adapters/discord/coalesce.js";

describe("edit coalescer", () => {
  it("sends the first edit, merges the burst behind it into the newest, one in flight at a time", async () => {
    const sent: string[] = [];
    let inFlight = 0;
    let maxInFlight = 0;
    const gates: Array<() => void> = [];
    const c = createEditCoalescer(async (_key, content) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await new Promise<void>((r) => gates.push(r));
      sent.push(content);
      inFlight--;
    }, 0);
    c.push("m1", "a");
    c.push("m1", "b");
    c.push("m1", "c");
    c.push("m1", "d");
    // Release edits as they arrive until the slot is idle.
    const settled = c.settle("m1");
    for (let i = 0; i < 50 && (gates.length || sent.length < 2); i++) {
      await new Promise((r) => setImmediate(r));
      gates.shift()?.();
    }
    await settled;
    expect(sent).toEqual(["a", "d"]);
    expect(maxInFlight).toBe(1);
  });

  it("cancel drops what is pending", async () => {
    const sent: string[] = [];
    let release: () => void = () => {};
    const c = createEditCoalescer(async (_k, content) => {
      await new Promise<void>((r) => {
        release = r;
      });
      sent.push(content);
    }, 0);
    c.push("m", "first");
    c.push("m", "second");
    const cancelled = c.cancel("m");
    release();
    await cancelled;
    await c.settle("m");
    expect(sent).toEqual(["first"]);
  });
});

describe("pacer send", () => {
  it("a sent job is never merged away by later pushes, runs once in order, and passes its failure back", async () => {
    const ran: string[] = [];
    let release: () => void = () => {};
    const p = createPacer(0);
    const job = (name: string) => async () => {
      ran.push(name);
      return 1;
    };
    // Hold the slot so everything below queues behind it.
    p.push("ch", async () => {
      await new Promise<void>((r) => {
        release = r;
      });
      ran.push("held");
      return 1;
    });
    await new Promise((r) => setImmediate(r));
    p.push("ch", job("edit-1"));
    const upload = p.send("ch", job("upload"));
    p.push("ch", job("edit-2"));
    const refused = p.send("ch", async () => {
      throw new Error("413");
    });
    release();
    await upload;
    await expect(refused).rejects.toThrow("413");
    await p.settle("ch");
    expect(ran).toEqual(["held", "upload", "edit-2"]);
  });
});

describe("pacer rest", () => {
  it("after rest the next job waits only for room in the channel's window (5 writes per 5 s, one kept)", async () => {
    vi.useFakeTimers();
    try {
      const ran: number[] = [];
      const p = createPacer(1500);
      const answer = async (n: number) => {
        p.push("ch", async () => {
          ran.push(n);
          return 1;
        });
        await vi.advanceTimersByTimeAsync(0);
        await p.settle("ch");
        p.rest("ch");
      };
      // Four answers at once: no 1.5 s cadence between them.
      for (const n of [1, 2, 3, 4]) await answer(n);
      expect(ran).toEqual([1, 2, 3, 4]);
      // A fifth would make five writes in the window: it waits until the first has left it.
      p.push("ch", async () => {
        ran.push(5);
        return 1;
      });
      await vi.advanceTimersByTimeAsync(4_900);
      expect(ran).toHaveLength(4);
      await vi.advanceTimersByTimeAsync(200);
      expect(ran).toEqual([1, 2, 3, 4, 5]);
      // Without rest, the next edit keeps the answer's cadence.
      p.push("ch", async () => {
        ran.push(6);
        return 1;
      });
      await vi.advanceTimersByTimeAsync(1_200);
      expect(ran).toHaveLength(5);
      await vi.advanceTimersByTimeAsync(400);
      expect(ran).toHaveLength(6);
    } finally {
      vi.useRealTimers();
    }
  });
});
