/** Bolt and its clients log through Neo's one logger. */
import { LogLevel, type Logger as SlackLogger } from "@slack/bolt";
import { log } from "../../core/log.js";

export function boltLogger(): SlackLogger {
  const child = log.child({ component: "slack" });
  const text = (msg: unknown[]) => msg.map((m) => (typeof m === "string" ? m : String(m))).join(" ");
  return {
    debug: (...msg) => child.debug(text(msg)),
    info: (...msg) => child.debug(text(msg)),
    warn: (...msg) => child.warn(text(msg)),
    error: (...msg) => child.error(text(msg)),
    setLevel: () => {},
    getLevel: () => LogLevel.DEBUG,
    setName: () => {},
  };
}
