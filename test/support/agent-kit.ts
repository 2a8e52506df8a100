/**
 * What a loop test needs besides the scripted endpoint: a recording Reporter, a ToolSurface test
 * double built from plain handlers (it implements the interface; it is not a mock of our module),
 * a recording MemoryPort, limits, and a turn context.
 */
import type { AgentDeps } from "../../src/core/agent/deps.js";
import type { AgentEvent, AgentLimits, TurnContext, TurnInput } from "../../src/core/agent/types.js";
import type { ApprovalChannel } from "../../src/core/approvals/types.js";
import { parseConversationKey } from "../../src/core/keys.js";
import type { ToolSchema } from "../../src/core/llm/types.js";
import {
  EMPTY_PAGE,
  type FaultRequest,
  type MemoryPage,
  type MemoryPort,
  type WriteBackJob,
} from "../../src/core/memory-port.js";
import type { Place } from "../../src/core/place.js";
import type { DraftOptions, Reporter } from "../../src/core/reporter.js";
import type { ToolResult, ToolSurface } from "../../src/core/tools/types.js";
import { createLlmForTest } from "./llm-for-test.js";
import type { ScriptedOpenAI } from "./scripted-openai.js";

export interface RecordingReporter extends Reporter {
  says: string[];
  statuses: string[];
  notices: string[];
}

export function recordingReporter(): RecordingReporter {
  const r: RecordingReporter = {
    says: [],
    statuses: [],
    notices: [],
    say: async (t) => {
      r.says.push(t);
    },
    status: async (t) => {
      r.statuses.push(t);
    },
    notice: async (t) => {
      r.notices.push(t);
    },
  };
  return r;
}

/** One draft as the loop drove it: every update (whole text so far), then finished or discarded. */
export interface RecordedDraft {
  options: DraftOptions;
  updates: string[];
  finished?: string;
  discarded: boolean;
}

export interface DraftingReporter extends RecordingReporter {
  drafts: RecordedDraft[];
  /** Everything in the order it happened: `say:…`, `status:…`, `draft`, `finish:…`, `discard`. */
  log: string[];
}

/** A recording Reporter with the `draft` capability. */
export function draftingReporter(): DraftingReporter {
  const base = recordingReporter();
  const r: DraftingReporter = {
    ...base,
    drafts: [],
    log: [],
    say: async (t) => {
      r.log.push(`say:${t}`);
      await base.say(t);
    },
    status: async (t) => {
      r.log.push(`status:${t}`);
      await base.status(t);
    },
    draft: (options) => {
      const d: RecordedDraft = { options, updates: [], discarded: false };
      r.drafts.push(d);
      r.log.push("draft");
      return {
        update: (t) => {
          if (d.finished !== undefined || d.discarded) throw new Error("update after the draft ended");
          d.updates.push(t);
        },
        finish: async (t) => {
          if (d.finished !== undefined || d.discarded) throw new Error("draft ended twice");
          d.finished = t;
          r.log.push(`finish:${t}`);
        },
        discard: async () => {
          if (d.finished !== undefined || d.discarded) throw new Error("draft ended twice");
          d.discarded = true;
          r.log.push("discard");
        },
      };
    },
  };
  return r;
}

export const noApprovals: ApprovalChannel = {
  present: async () => undefined,
  update: async () => {},
};

export type ToolHandler = (
  args: Record<string, unknown>,
  signal: AbortSignal,
) => Promise<ToolResult> | ToolResult;

export interface TestTools extends ToolSurface {
  calls: Array<{ name: string; args: Record<string, unknown> }>;
}

/** A ToolSurface over plain handlers; each tool takes any object. */
export function testTools(handlers: Record<string, ToolHandler>, extraSchemas: ToolSchema[] = []): TestTools {
  const calls: TestTools["calls"] = [];
  const schemas: ToolSchema[] = [
    ...Object.keys(handlers)
      .sort()
      .map((name) => ({
        type: "function" as const,
        function: { name, description: `test tool ${name}`, parameters: { type: "object", properties: {} } },
      })),
    ...extraSchemas,
  ];
  return {
    calls,
    schemas: () => schemas,
    dispatch: async (name, args, ctx) => {
      calls.push({ name, args });
      const h = handlers[name];
      if (!h) return { content: `Unknown tool ${name}`, isError: true };
      return h(args, ctx.signal);
    },
  };
}

export interface RecordingMemory extends MemoryPort {
  faults: FaultRequest[];
  writeBacks: WriteBackJob[];
}

export function recordingMemory(page: MemoryPage = EMPTY_PAGE): RecordingMemory {
  const m: RecordingMemory = {
    faults: [],
    writeBacks: [],
    fault: async (req) => {
      m.faults.push(req);
      return page;
    },
    writeBack: (job) => {
      m.writeBacks.push(job);
    },
  };
  return m;
}

export function testLimits(over: Partial<AgentLimits> = {}): AgentLimits {
  return {
    contextWindow: 128_000,
    softPct: 80,
    hardPct: 92,
    stepBudget: 40,
    noProgressStall: 3,
    refaultEvery: 6,
    maxRetriesPerTool: 3,
    maxAdaptAttempts: 2,
    maxOutputTokens: 1024,
    summaryPct: 20,
    toolRetryBaseMs: 1,
    ...over,
  };
}

export function testDeps(
  ep: ScriptedOpenAI,
  over: {
    tools?: ToolSurface;
    memory?: MemoryPort;
    limits?: Partial<AgentLimits>;
    env?: Record<string, string>;
    usage?: Parameters<typeof createLlmForTest>[2];
  } = {},
): AgentDeps & ReturnType<typeof createLlmForTest> {
  const { llm, ledger, usage } = createLlmForTest(ep, over.env, over.usage);
  return {
    llm,
    ledger,
    ...(usage ? { usage, budget: usage.budget } : {}),
    tools: over.tools ?? testTools({}),
    memory: over.memory ?? recordingMemory(),
    limits: testLimits(over.limits),
  };
}

export interface TestContext extends TurnContext {
  reporter: RecordingReporter;
  events: AgentEvent[];
  controller: AbortController;
  inbox: TurnInput[];
}

/**
 * A turn context; without a `place`, a shared conversation is a public channel of its workspace and
 * any other a DM.
 */
export function testContext(over: Partial<TurnContext> = {}): TestContext {
  const controller = new AbortController();
  const events: AgentEvent[] = [];
  const inbox: TurnInput[] = [];
  const conversation = over.conversation ?? "console:local:tty:test";
  const place: Place = {
    kind: over.shared ? "public" : "dm",
    workspace: parseConversationKey(conversation).workspace,
  };
  return {
    conversation,
    shared: false,
    place,
    reporter: recordingReporter(),
    approvals: noApprovals,
    signal: controller.signal,
    drainInbox: () => inbox.splice(0),
    onEvent: async (e) => {
      events.push(e);
    },
    ...over,
    events,
    controller,
    inbox,
  } as TestContext;
}

export const ann: TurnInput["speaker"] = { userKey: "console:local:ann", displayName: "Ann" };

export function input(text: string, speaker = ann): TurnInput {
  return { text, speaker };
}
