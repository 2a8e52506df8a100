/**
 * A local file host standing in for a platform's file server (any host name the test allows): it
 * serves registered files, answers 401 to a request without the expected Authorization header,
 * and records every request with the headers it carried, so a test can prove which host saw the
 * token. Plus the smallest real files of each kind the intake reads.
 */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { crc32 } from "node:zlib";

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

/** A PDF from its objects' bodies (object i + 1 is `objects[i]`; 1 is the catalog), with a valid xref. */
function pdfOf(objects: string[]): Buffer {
  let out = "%PDF-1.4\n";
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(Buffer.byteLength(out, "latin1"));
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = Buffer.byteLength(out, "latin1");
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const o of offsets) out += `${String(o).padStart(10, "0")} 00000 n \n`;
  out += `trailer<</Size ${objects.length + 1}/Root 1 0 R>>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, "latin1");
}

const FONT = "<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>";

/** Heavy PDFs an attacker can attach, each a few KB to a few MB. */
export const heavyPdf = {
  /** `pages` pages, each a line of text (3 = the font, then page and content pairs). */
  pages(pages: number): Buffer {
    const kids = Array.from({ length: pages }, (_, i) => `${4 + 2 * i} 0 R`).join(" ");
    const objects = ["<</Type/Catalog/Pages 2 0 R>>", `<</Type/Pages/Kids[${kids}]/Count ${pages}>>`, FONT];
    for (let i = 0; i < pages; i++) {
      const stream = `BT /F1 12 Tf 20 100 Td (page ${i + 1}) Tj ET`;
      objects.push(
        `<</Type/Page/Parent 2 0 R/MediaBox[0 0 300 144]/Contents ${5 + 2 * i} 0 R/Resources<</Font<</F1 3 0 R>>>>>>`,
        `<</Length ${stream.length}>>stream\n${stream}\nendstream`,
      );
    }
    return pdfOf(objects);
  },
  /** One page whose resources hold an array nested `depth` deep. */
  nested(depth: number): Buffer {
    const deep = `${"[".repeat(depth)}${"]".repeat(depth)}`;
    const stream = "BT /F1 12 Tf 20 100 Td (deep) Tj ET";
    return pdfOf([
      "<</Type/Catalog/Pages 2 0 R>>",
      "<</Type/Pages/Kids[3 0 R]/Count 1>>",
      `<</Type/Page/Parent 2 0 R/MediaBox[0 0 300 144]/Contents 4 0 R/Resources<</Font<</F1 5 0 R>>/Deep ${deep}>>>>`,
      `<</Length ${stream.length}>>stream\n${stream}\nendstream`,
      FONT,
    ]);
  },
  /** One page whose content stream draws `ops` text operations. */
  bigStream(ops: number): Buffer {
    const stream = `BT /F1 1 Tf ${"1 0 Td (x) Tj ".repeat(ops)}ET`;
    return pdfOf([
      "<</Type/Catalog/Pages 2 0 R>>",
      "<</Type/Pages/Kids[3 0 R]/Count 1>>",
      "<</Type/Page/Parent 2 0 R/MediaBox[0 0 300 144]/Contents 4 0 R/Resources<</Font<</F1 5 0 R>>>>>>",
      `<</Length ${stream.length}>>stream\n${stream}\nendstream`,
      FONT,
    ]);
  },
  /** A one-page document that declares `n` more (empty) objects. */
  objects(n: number): Buffer {
    const stream = "BT /F1 12 Tf 20 100 Td (objects) Tj ET";
    return pdfOf([
      "<</Type/Catalog/Pages 2 0 R>>",
      "<</Type/Pages/Kids[3 0 R]/Count 1>>",
      "<</Type/Page/Parent 2 0 R/MediaBox[0 0 300 144]/Contents 4 0 R/Resources<</Font<</F1 5 0 R>>>>>>",
      `<</Length ${stream.length}>>stream\n${stream}\nendstream`,
      FONT,
      ...Array.from({ length: n }, () => "null"),
    ]);
  },
};

/** One PNG chunk, its CRC right. */
function pngChunk(type: string, data: Buffer): Buffer {
  const b = Buffer.alloc(12 + data.length);
  b.writeUInt32BE(data.length, 0);
  b.write(type, 4, "latin1");
  data.copy(b, 8);
  b.writeUInt32BE(crc32(b.subarray(4, 8 + data.length)), 8 + data.length);
  return b;
}

/**
 * A PNG whose chunks are well formed (signature, IHDR declaring `width` × `height` RGBA, one IDAT,
 * IEND) but whose image data is `junk` bytes of noise: it starts like a PNG and is junk after that.
 */
export function pngHeader(width: number, height: number, junk = 64): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 6, 0, 0, 0], 8); // 8-bit RGBA
  const noise = Buffer.alloc(junk);
  for (let i = 0; i < junk; i++) noise[i] = (i * 7919) & 0xff;
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk("IHDR", ihdr),
    pngChunk("IDAT", noise),
    pngChunk("IEND", Buffer.alloc(0)),
  ]);
}
