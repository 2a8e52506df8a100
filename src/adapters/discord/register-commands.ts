/**
 * `npm run register:discord`: put Neo's application commands (`/neo`, `/neo-admin`) on Discord,
 * per guild when `DISCORD_GUILD_ID` is set (instant, for testing) or globally (may take up to an
 * hour to show). Bulk overwrite: running it again is safe.
 */
import { pathToFileURL } from "node:url";
import { REST, Routes } from "discord.js";
import { loadConfig, loadEnvFile } from "../../config.js";
import { log, redact, registerSecrets, setLogLevel } from "../../core/log.js";
import { DEFAULT_DISCORD_API_URL } from "./client.js";
import { commandDefinitions } from "./command-definitions.js";

export class RegisterCommandsError extends Error {
  readonly code = "DISCORD_REGISTER";
}

export interface RegisterOptions {
  token: string;
  appId: string;
  guildId?: string;
  apiUrl?: string;
}

/** Returns the names Discord now has registered. */
export async function registerCommands(o: RegisterOptions): Promise<string[]> {
  const rest = new REST({ api: o.apiUrl ?? DEFAULT_DISCORD_API_URL }).setToken(o.token);
  const route = o.guildId
    ? Routes.applicationGuildCommands(o.appId, o.guildId)
    : Routes.applicationCommands(o.appId);
  const saved = (await rest.put(route, { body: commandDefinitions() })) as Array<{ name: string }>;
  return saved.map((c) => c.name);
}

async function main(): Promise<void> {
  loadEnvFile();
  const cfg = loadConfig();
  setLogLevel(cfg.NEO_LOG_LEVEL ?? "info");
  registerSecrets([cfg.DISCORD_TOKEN ?? ""]);
  if (!cfg.DISCORD_TOKEN || !cfg.DISCORD_APP_ID) {
    throw new RegisterCommandsError("DISCORD_TOKEN and DISCORD_APP_ID must be set to register commands");
  }
  const names = await registerCommands({
    token: cfg.DISCORD_TOKEN,
    appId: cfg.DISCORD_APP_ID,
    guildId: cfg.DISCORD_GUILD_ID,
    apiUrl: cfg.DISCORD_API_URL,
  });
  log.info(
    { commands: names, scope: cfg.DISCORD_GUILD_ID ? `guild ${cfg.DISCORD_GUILD_ID}` : "global" },
    "Discord commands registered",
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  main().catch((err: unknown) => {
    // One line on stderr, like every start-up error.
    process.stderr.write(
      `${redact(`register:discord: ${err instanceof Error ? err.message : String(err)}`)}\n`,
    );
    process.exitCode = 1;
  });
}
