import { cortexOwner, type UserKey } from "../keys.js";
import type { CommandDeps } from "./types.js";

/** `/neo connections`: the caller's sign-ins (one set across a platform's places), or a sign-out. */
export async function connections(
  deps: CommandDeps,
  caller: UserKey,
  disconnect?: string,
  signIn?: string,
): Promise<string> {
  if (!deps.connections) return "No tool server here signs people in one by one.";
  const user = cortexOwner(caller);
  if (signIn !== undefined) {
    // Asked for: a new link even while one sent by a turn is still good (it may be lost).
    const link = await deps.connections.signInLink(user, signIn);
    if (link === undefined) return `\`${signIn}\` is not a tool server you sign in to one by one.`;
    if (link === "signed-in") return `You are already signed in to \`${signIn}\`.`;
    return `Sign in to \`${signIn}\` (this link is only for you, good for 10 minutes): ${link}`;
  }
  const signedIn = await deps.connections.list(user);
  if (disconnect === undefined)
    return signedIn.length
      ? [
          "*Your sign-ins*",
          ...signedIn.map(
            (c) =>
              `• \`${c.server}\` ${c.account ? `as ${c.account}` : "(the server did not say which account)"}`,
          ),
          "`/neo connections disconnect <server>` signs you out of one.",
        ].join("\n")
      : "You are not signed in to any tool server.";
  if (!signedIn.some((c) => c.server === disconnect)) return `You are not signed in to \`${disconnect}\`.`;
  await deps.connections.disconnect(user, disconnect);
  // Revocation is best effort (the server may offer none, or refuse): say only what is sure.
  return `Signed out of \`${disconnect}\`: your tokens are deleted here, and revoked at the server where it supports that. Its tools ask you to sign in again next time.`;
}
