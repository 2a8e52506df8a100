/**
 * Fetch one file from its platform. The URL must be https (http only for loopback test servers)
 * and its host one of the source's hosts, or nothing is requested: the platform's credential never
 * leaves for a host the platform does not own. Redirects are followed by hand, each hop checked the
 * same way. The declared size and the bytes actually read are both held to the limit; the read
 * stops as soon as it is passed.
 */
import type { FileSource } from "./types.js";

export class FileRefusedError extends Error {
  readonly code = "FILE_REFUSED";
}

const MAX_REDIRECTS = 3;

function isLoopback(host: string): boolean {
  return host === "127.0.0.1" || host === "localhost" || host === "[::1]";
}

/** The URL if it may be fetched from `source`, else a refusal naming why. */
export function checkedUrl(raw: string, source: FileSource): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new FileRefusedError("its address is not a valid URL");
  }
  const secure = url.protocol === "https:" || (url.protocol === "http:" && isLoopback(url.hostname));
  if (!secure) throw new FileRefusedError(`its address uses ${url.protocol}, not https`);
  if (!source.hosts.includes(url.host) && !source.hosts.includes(url.hostname)) {
    throw new FileRefusedError(`its address is on ${url.hostname}, not on the platform's file hosts`);
  }
  return url;
}

export function formatBytes(n: number): string {
  if (n >= 1024 * 1024) return `${(n / (1024 * 1024)).toFixed(1).replace(/\.0$/, "")} MB`;
  if (n >= 1024) return `${Math.round(n / 1024)} KB`;
  return `${n} B`;
}

async function readCapped(res: Response, maxBytes: number): Promise<Buffer> {
  const declared = Number(res.headers.get("content-length") ?? "0");
  if (declared > maxBytes) {
    await res.body?.cancel();
    throw new FileRefusedError(
      `it is ${formatBytes(declared)}, more than the ${formatBytes(maxBytes)} limit`,
    );
  }
  const chunks: Buffer[] = [];
  let total = 0;
  const reader = res.body?.getReader();
  if (!reader) return Buffer.alloc(0);
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel();
      throw new FileRefusedError(`it is more than the ${formatBytes(maxBytes)} limit`);
    }
    chunks.push(Buffer.from(value));
  }
  return Buffer.concat(chunks);
}

/** The file's bytes and the content type the host served. Throws `FileRefusedError`. */
export async function downloadFile(
  rawUrl: string,
  source: FileSource,
  maxBytes: number,
  signal?: AbortSignal,
): Promise<{ bytes: Buffer; type: string }> {
  let url = checkedUrl(rawUrl, source);
  const headers = await source.headers();
  for (let hop = 0; ; hop++) {
    const res = await fetch(url, { headers, redirect: "manual", ...(signal ? { signal } : {}) });
    if (res.status >= 300 && res.status < 400) {
      await res.body?.cancel();
      const next = res.headers.get("location");
      if (!next || hop >= MAX_REDIRECTS) throw new FileRefusedError("the platform redirected it too often");
      url = checkedUrl(new URL(next, url).toString(), source);
      continue;
    }
    if (res.status === 401 || res.status === 403 || res.status === 404) {
      await res.body?.cancel();
      throw new FileRefusedError(
        `the platform refused it (HTTP ${res.status}): it is gone, expired or not visible to me here`,
      );
    }
    if (!res.ok) {
      await res.body?.cancel();
      throw new FileRefusedError(`the platform answered HTTP ${res.status}`);
    }
    const bytes = await readCapped(res, maxBytes);
    return { bytes, type: (res.headers.get("content-type") ?? "").split(";")[0]!.trim() };
  }
}
