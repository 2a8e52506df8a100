/**
 * `GET /mcp/oauth/callback`: where an MCP server's authorization server sends the person back. The
 * flow is finished only by a known, unused, unexpired `state`, with the code issued for that flow
 * (its PKCE verifier); anything else gets a plain refusal page and nothing is stored. The page
 * names the account connected (`account.ts`), as the chat's confirmation does. The URL's
 * code and state are never logged (`redact.ts`).
 */
import type { OpsRoute } from "../../../ops/health.js";
import { CALLBACK_PATH, type OAuthConnections } from "./sign-in-types.js";

const htmlEscape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function page(title: string, body: string): string {
  return `<!doctype html><meta charset="utf-8"><title>${htmlEscape(title)}</title><h1>${htmlEscape(title)}</h1><p>${htmlEscape(body)}</p>\n`;
}

export function oauthCallbackRoute(oauth: Pick<OAuthConnections, "complete">): OpsRoute {
  return {
    path: CALLBACK_PATH,
    method: "GET",
    handler: (req, res) => {
      const q = new URL(req.url ?? "/", "http://callback").searchParams;
      const state = q.get("state") ?? "";
      const code = q.get("code");
      const send = (status: number, html: string) => {
        res.writeHead(status, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" });
        res.end(html);
      };
      // The server said no (the person declined): the flow is used up all the same.
      const finish = code
        ? oauth.complete(state, code)
        : oauth.complete(state, "").then(() => ({
            ok: false as const,
            reason: `The server answered: ${q.get("error") ?? "no code"}.`,
          }));
      void finish.then(
        (r) =>
          r.ok
            ? send(
                200,
                page(
                  "Signed in",
                  `Neo can now use "${r.alias}" for you ${r.account ? `as ${r.account}` : "(the server did not say which account)"}. Neo confirms it in the chat; you can close this page.`,
                ),
              )
            : send(400, page("Sign-in refused", r.reason)),
        () =>
          send(500, page("Sign-in failed", "Something went wrong on Neo's side. Ask Neo for a new link.")),
      );
    },
  };
}
