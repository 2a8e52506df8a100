import type { ChannelSettingsStore } from "../channels/settings.js";
import type { FileIntake } from "../files/intake.js";
import type { LlmClient } from "../llm/types.js";
import type { MemoryPort } from "../memory-port.js";
import type { ToolSurface } from "../tools/types.js";
import type { TurnBudget } from "../usage/types.js";
import type { Identity } from "./prompt.js";
import type { SignInPort } from "./sign-in.js";
import type { AgentLimits } from "./types.js";

/** What an agent is built from. One set per process, shared by every conversation. */
export interface AgentDeps {
  llm: LlmClient;
  tools: ToolSurface;
  memory: MemoryPort;
  limits: AgentLimits;
  /** Name and deployment, pinned in every system block (default: Neo, no deployment named). */
  identity?: Identity;
  /** Reads messages' files (default: files are named, not fetched; images not kept). */
  files?: FileIntake;
  /** The USD budget asked before each model call of a turn; unset = no budget (no prices). */
  budget?: TurnBudget | undefined;
  /** Per-channel settings (instructions, model, tools), read at the start of each turn; unset = none. */
  channels?: Pick<ChannelSettingsStore, "get"> | undefined;
  /** Per-person OAuth sign-ins checked at each turn's start; unset = no such servers. */
  signIn?: SignInPort | undefined;
}
