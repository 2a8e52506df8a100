/** Per-channel settings (`/neo channel`) and the gate every adapter asks before answering. */
export { channelGate, type GateVerdict, type MessagePlace } from "./gate.js";
export {
  type ChannelChange,
  type ChannelRef,
  type ChannelSettings,
  type ChannelSettingsStore,
  channelOf,
  createChannelSettings,
  DEFAULT_CHANNEL_SETTINGS,
  describeChannel,
} from "./settings.js";
export { restrictTools } from "./tools.js";
