/**
 * Loose parsing of the cheap model's write-back answer.
 */
import { describe, expect, it } from "vitest";
import type { Message } from "../../src/core/llm/types.js";
import { EMPTY_EXTRACT, parseLooseJson, parseWriteback } from "../../src/memory/writeback/parse.js";
import { lastExchange, renderForWriteback, requesterPart } from "../../src/memory/writeback/prompt.js";

const ANA = "slack:T1:U_ANA";
const BOB = "slack:T1:U_BOB";
const ana = { userKey: ANA, displayName: "Ana" };
const bob = { userKey: BOB, displayName: "Bob" };

const full = {
  facts: ["The repo uses pnpm workspaces."],
  user_facts: ["The user's name is Ana."],
  patterns: [
    {
      name: "Release a package",
      trigger: "user asks to publish a release",
      preconditions: ["clean tree"],
      steps: ["bump version", "tag", "publish"],
      gotchas: [],
      success_criteria: ["package visible on the registry"],
    },
  ],
  outcome: { summary: "Published v1.2.0", status: "success" },
};

/** The model's answer: one entry per conversation section it learned something from. */
const answer = (...entries: unknown[]) => JSON.stringify({ conversations: entries });
/** What a one-section prompt's answer `text` writes. */
const only = (text: string) => parseWriteback(text, 1).extracts[0]!;

describe("parseWriteback", () => {
  it("reads an object out of a code fence", () => {
    const out = only(
      `\`\`\`json\n${JSON.stringify({ conversations: [{ conversation: 1, ...full }] }, null, 2)}\n\`\`\``,
    );
    expect(out).toEqual({
      facts: ["The repo uses pnpm workspaces."],
      userFacts: ["The user's name is Ana."],
      patterns: [
        {
          name: "Release a package",
          trigger: "user asks to publish a release",
          preconditions: ["clean tree"],
          steps: ["bump version", "tag", "publish"],
          gotchas: [],
          successCriteria: ["package visible on the registry"],
        },
      ],
      outcome: { summary: "Published v1.2.0", status: "success" },
      constraints: [],
      goal: null,
      everywhere: false,
    });
  });

  it("reads hard constraints (at most 3) and a goal change", () => {
    const out = only(
      answer({
        conversation: 1,
        facts: [],
        constraints: [
          "Never spend more than 5 USDC without asking.",
          "Always use the Sepolia testnet.",
          "",
          7,
          "c3",
          "c4",
        ],
        goal: { statement: "Migrate the billing service to eks-prod-8", status: "Completed" },
      }),
    );
    expect(out.constraints).toEqual([
      "Never spend more than 5 USDC without asking.",
      "Always use the Sepolia testnet.",
      "c3",
    ]);
    expect(out.goal).toEqual({ statement: "Migrate the billing service to eks-prod-8", status: "done" });
    expect(only(answer({ conversation: 1, goal: { statement: "x", status: "someday" } })).goal).toBeNull();
  });

  it("reads an object surrounded by prose", () => {
    const out = only(`Sure! Here is the result:\n${answer({ conversation: 1, ...full })}\nHope that helps.`);
    expect(out.facts).toEqual(["The repo uses pnpm workspaces."]);
    expect(out.outcome?.status).toBe("success");
  });

  it("yields nothing for garbage, empty answers and non-objects, without throwing, and says it could not read them", () => {
    for (const text of ["", "no json here", "{not json}", "[1,2,3]", "null", "{", "}{", '"facts"']) {
      expect(parseWriteback(text, 2)).toEqual({
        extracts: [EMPTY_EXTRACT, EMPTY_EXTRACT],
        unread: "no JSON object in the answer",
      });
    }
    expect(parseLooseJson("prose {broken: } more")).toBeUndefined();
    expect(parseWriteback('{"facts": ["x"], "notes": "y"}', 2).unread).toBe(
      "no `conversations` list in the answer",
    );
    expect(parseWriteback(answer({ conversation: 7, facts: ["x"] }), 2).unread).toBe(
      "none of 1 entries names a conversation of the prompt",
    );
    // Nothing to remember is an answer read, not a failure to read one.
    expect(parseWriteback('{"conversations": []}', 2).unread).toBeUndefined();
    expect(parseWriteback(JSON.stringify(full), 1).unread).toBeUndefined();
  });

  it("accepts an empty answer and entries without user_facts", () => {
    expect(only('{"conversations": []}')).toEqual(EMPTY_EXTRACT);
    expect(only(answer({ conversation: 1, facts: [], patterns: [], outcome: null }))).toEqual(EMPTY_EXTRACT);
  });

  it("gives each conversation section only its own entry", () => {
    const { extracts: out, unread } = parseWriteback(
      answer(
        { conversation: 3, facts: ["from the third"] },
        { conversation: "1", user_facts: ["from the first"], remember_everywhere: true },
        { conversation: 3, facts: ["a second entry for the third"] },
        { conversation: 4, facts: ["no such section"] },
        { facts: ["no section named"] },
      ),
      3,
    );
    expect(out).toEqual([
      { ...EMPTY_EXTRACT, userFacts: ["from the first"], everywhere: true },
      EMPTY_EXTRACT,
      { ...EMPTY_EXTRACT, facts: ["from the third"] },
    ]);
    expect(unread).toBeUndefined();
    // With several sections, an object that names none (the one-conversation shape of before) is no one's.
    expect(parseWriteback(JSON.stringify(full), 2)).toEqual({
      extracts: [EMPTY_EXTRACT, EMPTY_EXTRACT],
      unread: "no `conversations` list in the answer",
    });
  });

  it("with one section, reads an entry that names none, or the bare one-conversation answer of before, as that section's", () => {
    const expected = only(answer({ conversation: 1, ...full }));
    expect(expected.facts).toEqual(["The repo uses pnpm workspaces."]);
    expect(only(JSON.stringify(full))).toEqual(expected);
    expect(only(`Here you go:\n${JSON.stringify(full)}`)).toEqual(expected);
    expect(only(answer(full))).toEqual(expected);
    // A number still has to be the section's: an entry named 2 is not section 1's.
    expect(only(answer({ conversation: 2, ...full }))).toEqual(EMPTY_EXTRACT);
    // A `conversations` list that is not a list is not a bare entry either.
    expect(only(JSON.stringify({ conversations: "none", ...full }))).toEqual(EMPTY_EXTRACT);
  });

  it("applies the 5 / 5 / 3 / 1 limits and drops invalid items one by one", () => {
    const many = {
      facts: [...Array.from({ length: 8 }, (_, i) => `fact ${i}`), 42, ""],
      user_facts: Array.from({ length: 9 }, (_, i) => `user fact ${i}`),
      patterns: [
        { name: "no steps", trigger: "x", steps: [] },
        ...Array.from({ length: 5 }, (_, i) => ({ name: `p${i}`, trigger: `t${i}`, steps: ["s"] })),
      ],
      outcome: { summary: "did it", status: "Succeeded" },
    };
    const out = only(answer({ conversation: 1, ...many }));
    expect(out.facts).toEqual(["fact 0", "fact 1", "fact 2", "fact 3", "fact 4"]);
    expect(out.userFacts).toHaveLength(5);
    expect(out.patterns.map((p) => p.name)).toEqual(["p0", "p1", "p2"]);
    expect(out.outcome).toEqual({ summary: "did it", status: "success" });
  });

  it("drops an outcome with an unknown status and keeps the rest", () => {
    const out = only(
      answer({ conversation: 1, facts: ["a fact"], outcome: { summary: "x", status: "meh" } }),
    );
    expect(out).toEqual({ ...EMPTY_EXTRACT, facts: ["a fact"] });
  });
});

describe("transcript rendering for write-back", () => {
  const transcript: Message[] = [
    { role: "user", content: "hi, I'm Ana", speaker: ana },
    { role: "assistant", content: "Hello Ana!" },
    { role: "user", content: "deploy build-42 please", speaker: ana },
    {
      role: "assistant",
      content: null,
      tool_calls: [
        {
          id: "c1",
          type: "function",
          function: { name: "ci__deploy", arguments: '{"build":"build-42"}' },
        },
      ],
    },
    { role: "tool", tool_call_id: "c1", content: "deployed build-42 to prod" },
    { role: "user", content: "and tell me when done", speaker: ana },
    { role: "assistant", content: "Done: build-42 is live." },
  ];

  it("marks the last turn as the one to consolidate, earlier messages as context", () => {
    const text = renderForWriteback([{ snapshots: [transcript], openGoal: "" }], ANA);
    const [context, turn] = text.split("=== THE TURN TO CONSOLIDATE ===");
    expect(context).toContain("USER: hi, I'm Ana");
    expect(turn).toContain('TOOL CALL ci__deploy({"build":"build-42"})');
    expect(turn).toContain("TOOL RESULT: deployed build-42 to prod");
    expect(turn).not.toContain("Hello Ana");
  });

  it("extracts the last exchange: the turn's user messages and the final answer", () => {
    expect(lastExchange(transcript, ANA)).toEqual({
      user: "deploy build-42 please\nand tell me when done",
      assistant: "Done: build-42 is live.",
    });
    expect(lastExchange(transcript.slice(0, 5), ANA)).toBeUndefined();
  });

  // A shared thread: Bob's turn, then Ana's, her turn carrying earlier thread messages as context.
  const shared: Message[] = [
    { role: "user", content: "Bob: my door code is 4411", speaker: bob },
    { role: "assistant", content: "Noted, Bob: 4411." },
    {
      role: "user",
      content: "[Earlier messages in this thread, for context]\nBob: bring the quokka\n[End of context]",
    },
    { role: "user", content: "Ana: what is left for the launch?", speaker: ana },
    { role: "assistant", content: "The slides." },
  ];

  it("takes only the requester's messages and Neo's work for them: other people and context are left out", () => {
    expect(requesterPart(shared, ANA)).toEqual([shared[3], shared[4]]);
    expect(requesterPart(shared, BOB)).toEqual([shared[0], shared[1]]);
    const forAna = renderForWriteback([{ snapshots: [shared], openGoal: "" }], ANA);
    expect(forAna).toContain("Ana: what is left for the launch?");
    expect(forAna).not.toMatch(/4411|quokka/);
    expect(lastExchange(shared, ANA)).toEqual({
      user: "Ana: what is left for the launch?",
      assistant: "The slides.",
    });
    // The last answer was Ana's: Bob has no exchange to keep from it.
    expect(lastExchange(shared, BOB)).toBeUndefined();
  });

  it("keeps the requester's running turn when a compaction left only its tail", () => {
    const tail: Message[] = [
      { role: "user", content: "[Neo runtime] What came before this point is in the consolidated summary." },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "c9", type: "function", function: { name: "ci__status", arguments: "{}" } }],
      },
      { role: "tool", tool_call_id: "c9", content: "build-77 green" },
      { role: "assistant", content: "build-77 is green." },
    ];
    const turn = renderForWriteback([{ snapshots: [tail], openGoal: "" }], ANA).split(
      "=== THE TURN TO CONSOLIDATE ===",
    )[1];
    expect(turn).toContain("TOOL RESULT: build-77 green");
    expect(turn).toContain("NEO: build-77 is green.");
    expect(turn).not.toContain("Neo runtime");
  });

  it("renders each conversation as its own numbered section, with its own goal, context and turns", () => {
    const dm = [...transcript];
    const channel: Message[] = [
      { role: "user", content: "which region is staging in?", speaker: ana },
      { role: "assistant", content: "eu-west-1." },
    ];
    const later: Message[] = [
      ...channel,
      { role: "user", content: "and prod?", speaker: ana },
      { role: "assistant", content: "us-east-1." },
    ];
    const text = renderForWriteback(
      [
        { snapshots: [dm], openGoal: "Ship build-42" },
        { snapshots: [channel, later], openGoal: "" },
      ],
      ANA,
    );
    const [before, first, second] = text.split(/^### CONVERSATION \d+ ###$/m);
    expect(before).toBe("");
    expect(first).toContain("=== OPEN GOAL ON RECORD ===\nShip build-42");
    expect(first).toContain("USER: hi, I'm Ana");
    expect(first).not.toMatch(/staging|prod\?/);
    expect(second).not.toContain("OPEN GOAL ON RECORD");
    expect(second).toContain(
      "=== THE TURN TO CONSOLIDATE (2 turns since the last write-back, in order) ===\nUSER: which region is staging in?\nNEO: eu-west-1.\nUSER: and prod?",
    );
    expect(second).not.toMatch(/build-42/);
  });

  it("a Discord person is one requester across guilds and DMs (one cortex)", () => {
    const inGuild: Message[] = [
      { role: "user", content: "hello", speaker: { userKey: "discord:G1:U1", displayName: "Ana" } },
      { role: "assistant", content: "hi" },
    ];
    expect(lastExchange(inGuild, "discord:@me:U1")).toEqual({ user: "hello", assistant: "hi" });
  });
});
