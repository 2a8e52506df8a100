/**
 * Which account a finished sign-in connected, as the server or IdP says it, so the person can see
 * it was theirs (a leaked link finished by someone else stores *their* tokens as the person's; the
 * confirmation and `/neo connections` show the stranger's name). In order, the first that names
 * someone:
 * 1. an OpenID Connect `id_token` in the token response (Core §3.1.3.3); read without checking its
 *    signature: it came straight from the token endpoint over the connection Neo opened (§3.1.3.7
 *    lets TLS stand in for it), and it is shown, never trusted for access;
 * 2. the authorization server's `userinfo_endpoint` (OIDC Discovery §3, Core §5.3), asked with the
 *    new access token.
 * (Other fields of the token response are not kept: the SDK's token schema strips them.)
 * Undefined when neither does: the person is told so plainly. Never a token, never logged.
 */
import { z } from "zod";

/** Claims that name a person, most readable first. */
const naming = z
  .object({
    email: z.string().optional(),
    preferred_username: z.string().optional(),
    username: z.string().optional(),
    login: z.string().optional(),
    name: z.string().optional(),
    sub: z.string().optional(),
  })
  .passthrough();

const MAX_CHARS = 120;

/** The readable name among `value`'s claims, cut to a line; undefined when none. */
export function accountIn(value: unknown): string | undefined {
  const v = naming.safeParse(value);
  if (!v.success) return undefined;
  const { email, preferred_username, username, login, name, sub } = v.data;
  const found = [email, preferred_username, username, login, name, sub].find((s) => s?.trim());
  // One line of plain text for chat messages: no control characters, no link or code markup.
  return found
    ?.replace(/[\p{Cc}<>`|]/gu, "")
    .trim()
    .slice(0, MAX_CHARS);
}

/** The claims of a JWT, unchecked (see above); undefined when it is not one. */
export function jwtClaims(jwt: string): unknown {
  try {
    return JSON.parse(Buffer.from(jwt.split(".")[1] ?? "", "base64url").toString());
  } catch {
    return undefined;
  }
}

/**
 * The account of a sign-in whose token response was `tokens` (as the SDK keeps it), at an
 * authorization server whose metadata is `metadata` (when discovered).
 */
export async function accountOf(
  tokens: Record<string, unknown>,
  metadata: unknown,
): Promise<string | undefined> {
  const idToken = typeof tokens.id_token === "string" ? accountIn(jwtClaims(tokens.id_token)) : undefined;
  if (idToken) return idToken;
  const userinfo = z.object({ userinfo_endpoint: z.string().url() }).safeParse(metadata);
  const access = typeof tokens.access_token === "string" ? tokens.access_token : undefined;
  if (userinfo.success && access) {
    const res = await fetch(userinfo.data.userinfo_endpoint, {
      headers: { authorization: `Bearer ${access}`, accept: "application/json" },
    }).catch(() => undefined);
    const named = res?.ok ? accountIn(await res.json().catch(() => undefined)) : undefined;
    if (named) return named;
  }
  return undefined;
}
