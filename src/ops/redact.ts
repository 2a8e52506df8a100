/**
 * Credentials inside URLs, wherever a URL is printed: `scheme://user:password@host` keeps the user
 * and loses the password, `scheme://token@host` loses the token, and query parameters whose name
 * says key, token, secret, password, signature, auth, code, state or verifier (OAuth) lose their value. Pure string work, cheap
 * enough for every log line (each pattern runs only when the text could hold it).
 */

const USER_PASSWORD = /\b([a-z][a-z0-9+.-]*:\/\/)([^\s/?#@:"'<>\\]*):([^\s/?#@"'<>\\]+)@/gi;
const USER_ONLY = /\b([a-z][a-z0-9+.-]*:\/\/)([^\s/?#@:"'<>\\]+)@/gi;
const SECRET_PARAM =
  /([?&;][a-z0-9_.-]*(?:key|token|secret|passw(?:or)?d|pwd|sig(?:nature)?|auth|credential|code|state|verifier)[a-z0-9_.-]*=)[^&\s"'#<>\\]+/gi;

export const REDACTED = "[redacted]";

/** `text` with the credentials of every URL in it replaced by `[redacted]`. */
export function redactUrls(text: string): string {
  let out = text;
  if (out.includes("@") && out.includes("://")) {
    out = out.replace(USER_PASSWORD, `$1$2:${REDACTED}@`).replace(USER_ONLY, `$1${REDACTED}@`);
  }
  if (out.includes("=")) out = out.replace(SECRET_PARAM, `$1${REDACTED}`);
  return out;
}

/**
 * The secret parts of one URL (password, user when it alone is the credential, secret-looking
 * query values), raw and decoded, for registering with the log redactor. Empty when it has none
 * or does not parse.
 */
export function urlSecrets(url: string | undefined): string[] {
  if (!url) return [];
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return [];
  }
  const out: string[] = [];
  const both = (v: string) => {
    if (!v) return;
    out.push(v);
    try {
      const d = decodeURIComponent(v);
      if (d !== v) out.push(d);
    } catch {
      // not percent-encoded: the raw value is enough
    }
  };
  if (u.password) both(u.password);
  else both(u.username);
  for (const [name, value] of u.searchParams) {
    if (/key|token|secret|passw(or)?d|pwd|sig|auth|credential/i.test(name)) both(value);
  }
  return out;
}
