/**
 * Every Bolt listener the adapter has, registered in the order that matters: inbound first (its
 * middleware dedupes events), then what keeps channels and users known, the assistant panel, clicks
 * (approvals, memory buttons and the App Home, then every other button), commands and, in OAuth
 * mode, uninstalls. Events go to their handlers through one router, installed last (after the
 * inbound dedupe and the assistant panel's middleware): see `event-router.ts`.
 */
import type { App } from "@slack/bolt";
import { registerApprovalActions } from "../approval-listener.js";
import { APPROVE_ACTION, REJECT_ACTION } from "../approvals.js";
import { registerAssistant } from "../assistant.js";
import type { AssistantThreads } from "../assistant-threads.js";
import { CONFIRM_ACTION, registerCommands } from "../command-listener.js";
import { registerDirectoryEvents } from "../directory-listener.js";
import type { DraftPace } from "../draft/pacer.js";
import { createEventRouter } from "../event-router.js";
import { registerFormActions } from "../form-listener.js";
import { FORM_ACTIONS } from "../forms.js";
import { registerInbound } from "../inbound-listener.js";
import type { SlackInstallations } from "../installations.js";
import { MEMORY_ACTION } from "../memory-blocks.js";
import { registerMemoryListeners } from "../memory-listener.js";
import { registerUninstall } from "../uninstall-listener.js";
import { registerUnknownActions } from "../unknown-action-listener.js";
import type { SlackWorkspaces } from "../workspaces.js";
import type { ConversationIOs } from "./conversation-io.js";
import type { SlackAdapterOptions } from "./options.js";

export interface SlackListenersDeps {
  workspaces: SlackWorkspaces;
  ios: ConversationIOs;
  pace: DraftPace;
  assistantThreads: AssistantThreads;
  /** OAuth mode only: uninstalls remove the workspace's installation. */
  installations: SlackInstallations | undefined;
}

export function registerSlackListeners(app: App, o: SlackAdapterOptions, deps: SlackListenersDeps): void {
  const { config } = o;
  const { workspaces, ios, pace, assistantThreads, installations } = deps;
  const events = createEventRouter();
  const take = registerInbound(app, events, {
    store: o.store,
    access: o.access,
    conversations: o.conversations,
    workspaces,
    policy: { answerBots: new Set(config.NEO_ANSWER_BOTS ?? []) },
    channels: o.commands.channels,
    threadIo: ios.ioIn,
  });
  // Change events (and every message's channel_type) keep what is known of channels and users current.
  registerDirectoryEvents(events, workspaces);
  // After the inbound middleware (event dedupe): assistant-thread messages then take the inbound path.
  registerAssistant(app, {
    store: o.store,
    workspaces,
    settings: config.assistant,
    take,
    reporter: (conversation, threadTs) => ios.ioIn(conversation, threadTs).reporter,
    threads: assistantThreads,
  });
  registerApprovalActions(app, { broker: o.broker, workspaces });
  registerFormActions(app, workspaces);
  registerMemoryListeners(app, events, { commands: o.commands, access: o.access, workspaces });
  registerUnknownActions(
    app,
    [APPROVE_ACTION, REJECT_ACTION, CONFIRM_ACTION, ...Object.values(FORM_ACTIONS)],
    workspaces,
    [`${MEMORY_ACTION}_`],
  );
  registerCommands(app, {
    commands: o.commands,
    access: o.access,
    conversations: o.conversations,
    workspaces,
    io: ios.io,
    pace,
    store: o.store,
  });
  if (installations) registerUninstall(events, { installations, workspaces, store: o.store });
  events.install(app);
}
