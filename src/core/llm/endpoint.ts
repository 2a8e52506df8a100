/**
 * The model endpoint as requests use it. Credentials written into `OPENAI_BASE_URL`
 * (`https://user:password@proxy/v1`, e.g. a basic-auth proxy in front of a local server) cannot stay
 * in the URL: fetch refuses such URLs, and a URL is printed in errors and `/healthz`. They become
 * an `Authorization: Basic` header and the URL keeps only where to go.
 */

export interface Endpoint {
  /** The base URL without credentials; undefined = the SDK's default (api.openai.com). */
  baseURL: string | undefined;
  /** Headers every request to the endpoint carries (the basic credentials, when the URL had them). */
  headers: Record<string, string>;
}

export function endpointOf(baseUrl: string | undefined): Endpoint {
  if (!baseUrl) return { baseURL: undefined, headers: {} };
  const u = new URL(baseUrl);
  if (!u.username && !u.password) return { baseURL: baseUrl, headers: {} };
  const credentials = `${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`;
  u.username = "";
  u.password = "";
  return {
    baseURL: u.toString().replace(/\/$/, baseUrl.endsWith("/") ? "/" : ""),
    headers: { authorization: `Basic ${Buffer.from(credentials).toString("base64")}` },
  };
}
