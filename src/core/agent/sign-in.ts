/**
 * Per-person sign-in at the start of a turn: the tools of a `"scope": "user"` OAuth server the
 * requester has not signed in to are left out of the turn, the requester is sent a private sign-in
 * link (their platform's form channel, so only they see it), and the model is told in one line per
 * server. Once signed in, the next turn's check finds the tokens and the tools are back.
 */
import { cortexOwner, type Speaker } from "../keys.js";
import { log } from "../log.js";
import type { FormChannel } from "../tools/elicitation.js";
import type { SignInOffer } from "../tools/oauth/sign-in.js";
import type { ToolSurface } from "../tools/types.js";

/** What the turn needs of the OAuth connections (`OAuthConnections`). */
export interface SignInPort {
  /** The per-person OAuth servers `user` has not signed in to. */
  unauthorized(user: Speaker["userKey"]): Promise<string[]>;
  /** Offer `user` a sign-in link through `send`, unless one sent earlier is still good. */
  offerSignIn(
    user: Speaker["userKey"],
    alias: string,
    send: (url: string) => Promise<boolean>,
  ): Promise<SignInOffer>;
  /** Signed in everywhere but `unauthorized`: servers not listed yet list their tools as `user`. */
  listFor(user: Speaker["userKey"], unauthorized: readonly string[]): Promise<void>;
}

export interface GatedTools {
  tools: ToolSurface;
  /** One line per left-out server, for the model. */
  notes: string[];
}

/** The surface without `aliases`' tools (`alias__name`); a call to one is refused in-band. */
export function withoutServers(surface: ToolSurface, aliases: readonly string[]): ToolSurface {
  if (!aliases.length) return surface;
  const serverOf = (name: string) => aliases.find((a) => name.startsWith(`${a}__`));
  return {
    schemas: () => surface.schemas().filter((s) => !serverOf(s.function.name)),
    dispatch: (name, args, ctx) => {
      const alias = serverOf(name);
      return alias
        ? Promise.resolve({ content: `Tool ${name} needs a sign-in to ${alias} first.`, isError: true })
        : surface.dispatch(name, args, ctx);
    },
  };
}

/** What the model is told of each left-out server, after "<server> needs <name> to sign in". */
const SAID: Record<Exclude<SignInOffer, "signed-in">, string> = {
  sent: "; a link was sent to them privately.",
  // Once per link, not every turn (the link is good for 10 minutes, or until used).
  "sent-earlier": "; the private link sent to them earlier still works.",
  "not-sent": ", and no private link could be sent here.",
};

export async function gateSignIns(
  port: SignInPort,
  tools: ToolSurface,
  speaker: Speaker,
  forms: FormChannel | undefined,
  /** The servers this channel allows (`/neo channel tools`); undefined = all. */
  allowed: readonly string[] | undefined,
): Promise<GatedTools> {
  // Tokens are the person's across a platform's places (a Discord user's DMs and guilds alike).
  const user = cortexOwner(speaker.userKey);
  const missing = await port.unauthorized(user);
  await port.listFor(user, missing);
  // A server this channel does not offer is not this turn's to sign in to.
  const here = allowed ? missing.filter((a) => allowed.includes(a)) : missing;
  if (!here.length) return { tools, notes: [] };
  const notes: string[] = [];
  for (const alias of here) {
    const send = (url: string): Promise<boolean> =>
      forms
        ? forms
            .link(
              { server: alias, message: "Sign in to use its tools (this link is only for you).", url },
              speaker,
            )
            .then(
              () => true,
              (err: unknown) => {
                log.warn({ err, server: alias }, "could not send the sign-in link");
                return false;
              },
            )
        : Promise.resolve(false);
    // No private channel here: no flow is started, and a later turn elsewhere may send the link.
    const offer = forms ? await port.offerSignIn(user, alias, send) : "not-sent";
    if (offer === "signed-in") continue; // signed in meanwhile (a refresh): the next check sees it
    notes.push(`${alias} needs ${speaker.displayName} to sign in${SAID[offer]}`);
  }
  return { tools: withoutServers(tools, here), notes };
}
