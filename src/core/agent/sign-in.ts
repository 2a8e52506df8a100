/**
 * Per-person sign-in at the start of a turn: the tools of a `"scope": "user"` OAuth server the
 * requester has not signed in to are left out of the turn, the requester is sent a private sign-in
 * link (their platform's form channel, so only they see it), and the model is told in one line per
 * server. Once signed in, the next turn's check finds the tokens and the tools are back, and the
 * person is told privately which account the sign-in connected. A server the company's IdP refuses
 * them is left out the same way; they are told privately once, with the IdP's error code.
 */
import { cortexOwner, type Speaker } from "../keys.js";
import { log } from "../log.js";
import type { FormChannel, PrivateNote } from "../tools/elicitation.js";
import type { Connection, OAuthConnections, SignInOffer } from "../tools/oauth/sign-in-types.js";
import type { ToolSurface } from "../tools/types.js";

/** What the turn needs of the OAuth connections, and of the tool surface (`listFor`). */
export type SignInPort = Pick<
  OAuthConnections,
  "unauthorized" | "offerSignIn" | "tellRefused" | "takeFinished"
> & {
  /** Signed in everywhere but `unauthorized`: servers not listed yet list their tools as `user`. */
  listFor(user: Speaker["userKey"], unauthorized: readonly string[]): Promise<void>;
};

export function signInPort(oauth: OAuthConnections, tools: Pick<SignInPort, "listFor">): SignInPort {
  return {
    unauthorized: (user) => oauth.unauthorized(user),
    offerSignIn: (user, alias, send) => oauth.offerSignIn(user, alias, send),
    tellRefused: (user, alias, code, send) => oauth.tellRefused(user, alias, code, send),
    takeFinished: (user) => oauth.takeFinished(user),
    listFor: (user, unauthorized) => tools.listFor(user, unauthorized),
  };
}

/** The private confirmation of a finished sign-in: whose account it connected, or that nobody said. */
export function connectedNote(c: Connection): PrivateNote {
  return {
    server: c.server,
    message: c.account
      ? `Connected to ${c.server} as ${c.account}. Not you? \`/neo connections disconnect ${c.server}\` signs it out.`
      : `Connected to ${c.server}; the server did not say which account. Not yours? \`/neo connections disconnect ${c.server}\` signs it out.`,
  };
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
        ? Promise.resolve({
            content: `Tool ${name} is not available to this person now: see the note on ${alias}.`,
            isError: true,
          })
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
  const tell = (note: PrivateNote): Promise<boolean> =>
    forms
      ? forms.tell(note, speaker).then(
          () => true,
          (err: unknown) => {
            log.warn({ err, server: note.server }, "could not send a private note");
            return false;
          },
        )
      : Promise.resolve(false);
  // Sign-ins finished since their last turn: who they connected, where only they see it.
  if (forms) for (const done of await port.takeFinished(user)) await tell(connectedNote(done));
  const missing = await port.unauthorized(user);
  await port.listFor(
    user,
    missing.map((m) => m.alias),
  );
  // A server this channel does not offer is not this turn's to sign in to.
  const here = allowed ? missing.filter((m) => allowed.includes(m.alias)) : missing;
  if (!here.length) return { tools, notes: [] };
  const notes: string[] = [];
  for (const { alias, refused } of here) {
    if (refused) {
      const told = await port.tellRefused(user, alias, refused, () =>
        tell({
          server: alias,
          message: `Your company's sign-in refused you access to ${alias} (${refused}). Ask your IT admin if you need it.`,
        }),
      );
      notes.push(
        `${alias} is not available to ${speaker.displayName}: their company's sign-in refused them access to it (${refused})${told ? "; they were told privately." : "."}`,
      );
      continue;
    }
    const send = (url: string) =>
      tell({ server: alias, message: "Sign in to use its tools (this link is only for you).", url });
    // No private channel here: no flow is started, and a later turn elsewhere may send the link.
    const offer = forms ? await port.offerSignIn(user, alias, send) : "not-sent";
    if (offer === "signed-in") continue; // signed in meanwhile (a refresh): the next check sees it
    notes.push(`${alias} needs ${speaker.displayName} to sign in${SAID[offer]}`);
  }
  return {
    tools: withoutServers(
      tools,
      here.map((m) => m.alias),
    ),
    notes,
  };
}
