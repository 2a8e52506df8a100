/**
 * A byte-level search of a data directory: every file under it, read raw (no parsing), for strings
 * that must not be there (an erasure's acceptance: "finds none of the erased strings on disk").
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createClient } from "@keyv/redis";

/** Each `needle` found in some file under `dir`, with the file: `[]` = none is on disk. */
export function foundOnDisk(dir: string, needles: readonly string[]): string[] {
  const found: string[] = [];
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) {
        const bytes = readFileSync(p);
        for (const n of needles) if (bytes.includes(Buffer.from(n, "utf8"))) found.push(`${n} in ${p}`);
      }
    }
  };
  walk(dir);
  return found;
}

/**
 * Each `needle` found in some key of `store` (its name, or its value or list read whole, as stored
 * JSON): `[]` = none is in the store. Every key under the store's prefix is read (Redis: SCAN).
 */
export async function foundInStore(
  store: {
    keys(prefix: string): Promise<string[]>;
    get<T>(key: string): Promise<T | undefined>;
    range<T>(key: string, start: number, stop: number): Promise<T[]>;
  },
  needles: readonly string[],
): Promise<string[]> {
  const found: string[] = [];
  for (const key of await store.keys("")) {
    let text: string;
    try {
      text = JSON.stringify(await store.get<unknown>(key)) ?? "";
    } catch {
      // A list: read it whole.
      text = JSON.stringify(await store.range<unknown>(key, 0, -1));
    }
    for (const n of needles) if (key.includes(n) || text.includes(n)) found.push(`${n} in ${key}`);
  }
  return found;
}

/**
 * Each `needle` found in a Redis key under `prefix` (its name, or its value read by its type:
 * GET, LRANGE, HGETALL, SMEMBERS, ZRANGE, XRANGE), straight from the server rather than through our
 * store: `[]` = none is there.
 */
export async function foundInRedis(
  url: string,
  prefix: string,
  needles: readonly string[],
): Promise<string[]> {
  const client = createClient({ url });
  await client.connect();
  const found: string[] = [];
  try {
    for await (const batch of client.scanIterator({ MATCH: `${prefix}*`, COUNT: 500 })) {
      for (const key of batch) {
        const type = await client.type(key);
        const value =
          type === "string"
            ? await client.get(key)
            : type === "list"
              ? await client.lRange(key, 0, -1)
              : type === "hash"
                ? await client.hGetAll(key)
                : type === "set"
                  ? await client.sMembers(key)
                  : type === "zset"
                    ? await client.zRange(key, 0, -1)
                    : await client.xRange(key, "-", "+");
        const text = JSON.stringify(value);
        for (const n of needles) if (key.includes(n) || text.includes(n)) found.push(`${n} in ${key}`);
      }
    }
  } finally {
    await client.quit();
  }
  return found;
}
