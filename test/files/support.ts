/**
 * A local file host standing in for a platform's file server (any host name the test allows): it
 * serves registered files, answers 401 to a request without the expected Authorization header,
 * and records every request with the headers it carried, so a test can prove which host saw the
 * token. Plus the smallest real files of each kind the intake reads.
 */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface HostedFile {
  body: Buffer;
  type: string;
  /** Answer a redirect to this URL instead of the body. */
  redirect?: string;
}

export interface FileHost {
  url: string;
  /** `host:port`, as a `FileSource` lists it. */
  host: string;
  files: Map<string, HostedFile>;
  requests: Array<{ path: string; headers: IncomingHttpHeaders }>;
  close(): Promise<void>;
}

export async function startFileHost(auth?: string, hostname = "127.0.0.1"): Promise<FileHost> {
  const files = new Map<string, HostedFile>();
  const requests: FileHost["requests"] = [];
  const server: Server = createServer((req, res) => {
    requests.push({ path: req.url ?? "", headers: req.headers });
    if (auth && req.headers.authorization !== auth) {
      res.writeHead(401).end();
      return;
    }
    const f = files.get(new URL(req.url ?? "/", "http://x").pathname);
    if (!f) {
      res.writeHead(404).end();
      return;
    }
    if (f.redirect) {
      res.writeHead(302, { location: f.redirect }).end();
      return;
    }
    res.writeHead(200, { "content-type": f.type, "content-length": f.body.length }).end(f.body);
  });
  await new Promise<void>((r) => server.listen(0, hostname, r));
  const port = (server.address() as AddressInfo).port;
  const host = `${hostname}:${port}`;
  return {
    url: `http://${host}`,
    host,
    files,
    requests,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/** A 1x1 PNG. */
export const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  "base64",
);

/** A one-page PDF whose text layer says `text` (ASCII without parentheses). */
export function pdfSaying(text: string): Buffer {
  const stream = `BT /F1 18 Tf 20 100 Td (${text}) Tj ET`;
  return Buffer.from(
    [
      "%PDF-1.4",
      "1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj",
      "2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj",
      "3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 300 144]/Contents 4 0 R/Resources<</Font<</F1 5 0 R>>>>>>endobj",
      `4 0 obj<</Length ${stream.length}>>stream`,
      stream,
      "endstream endobj",
      "5 0 obj<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>endobj",
      "trailer<</Root 1 0 R>>",
      "%%EOF",
    ].join("\n"),
  );
}
