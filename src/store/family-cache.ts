/**
 * Server-assisted client-side caching (RESP3 + CLIENT TRACKING, Redis >= 6.2, docs/operations.md):
 * a GET of a cached family (`CACHED_FAMILIES`, redis-link.ts) answered before is answered from memory
 * until Redis pushes that the key changed, whoever changed it, so the per-message reads of settings,
 * deny list and directory cost no round trip. Bounded by entries, LRU: those values are small JSON,
 * so 10 000 are a few MB per instance. Every other read (lists, leases, claims) goes to Redis.
 *
 * Tracking in broadcast mode, for the cached families only: Redis pushes a change to any key under
 * them (whoever made it) and tracks nothing else, so the keys scripts read and write on every
 * message (a conversation's log, inbox, lease) cost no invalidation pushes and no tracking-table
 * entries; a GET outside them goes to Redis as if there were no cache.
 *
 * The entries live in node-redis's cache (its map, LRU, invalidation by key, emptied when the
 * connection fails), keyed by the Redis key (a GET's reply is all they hold). A hit is answered by
 * `FamilyEntries.hit` without a command: node-redis's own path (command wrapper, parser, cache key
 * string, structuredClone of the reply) cost more CPU than the read it saved, on every message.
 */
import { BasicClientSideCache, BasicPooledClientSideCache } from "@redis/client";

export const CACHE_MAX_ENTRIES = 10_000;

type HandleArgs = Parameters<BasicClientSideCache["handleCache"]>;
type Entry = NonNullable<ReturnType<BasicClientSideCache["get"]>>;
/** A GET's reply (RESP3, default type mapping). */
type Reply = string | null;

/** The cached families' entries in one node-redis cache. */
class FamilyEntries {
  /** The reply each value entry holds; an entry absent here is a GET still in flight. */
  private readonly values = new WeakMap<Entry, Reply>();
  private readonly pending = new WeakMap<Entry, Promise<unknown>>();
  constructor(
    private readonly cache: BasicClientSideCache,
    readonly prefixes: readonly string[],
  ) {}

  /** The cached reply to GET `key`, or undefined when it is not cached (nothing sent either way). */
  hit(key: string): { reply: Reply } | undefined {
    const entry = this.cache.get(key);
    if (entry === undefined || !this.values.has(entry)) return undefined;
    this.cache.recordHits(1);
    return { reply: this.values.get(entry) as Reply };
  }

  /** node-redis's `handleCache`: a GET of a family key is cached, anything else is sent as is. */
  async handle(...[client, parser, send, transformReply, typeMapping]: HandleArgs): Promise<unknown> {
    const args = parser.redisArgs;
    const key = args.length === 2 && args[0] === "GET" ? String(args[1]) : undefined;
    if (key === undefined || !this.prefixes.some((p) => key.startsWith(p))) {
      const reply = await send();
      return transformReply ? transformReply(reply, parser.preserve, typeMapping) : reply;
    }
    const cached = this.hit(key);
    if (cached) return cached.reply;
    this.cache.recordMisses(1);
    let entry = this.cache.get(key);
    let reply: unknown;
    const inFlight = entry && this.pending.get(entry);
    if (entry && inFlight) reply = await inFlight;
    else {
      const promise = send();
      entry = this.cache.createPromiseEntry(client, promise);
      this.pending.set(entry, promise);
      this.cache.set(key, entry, parser.keys);
      try {
        reply = await promise;
      } catch (err) {
        if (entry.validate()) this.cache.delete(key);
        throw err;
      }
    }
    const value = (transformReply ? transformReply(reply, parser.preserve, typeMapping) : reply) as Reply;
    // Kept only if no invalidation came while it was read: a read that crosses a write is not kept.
    if (entry.validate()) {
      const kept = this.cache.createValueEntry(client, value);
      this.values.set(kept, value);
      this.cache.set(key, kept, parser.keys);
    }
    return value;
  }
}

const trackingFor = (prefixes: readonly string[]): string[] => [
  "CLIENT",
  "TRACKING",
  "ON",
  "BCAST",
  ...prefixes.flatMap((p) => ["PREFIX", p]),
];

const CACHE_CONFIG = { maxEntries: CACHE_MAX_ENTRIES, evictPolicy: "LRU" } as const;

/** One server's cache. */
export class FamilyCache extends BasicClientSideCache {
  readonly families: FamilyEntries;
  constructor(prefixes: readonly string[]) {
    super(CACHE_CONFIG);
    this.families = new FamilyEntries(this, prefixes);
  }
  override trackingOn(): string[] {
    return trackingFor(this.families.prefixes);
  }
  override handleCache(...args: HandleArgs): Promise<unknown> {
    return this.families.handle(...args);
  }
}

/** A cluster's cache, shared by its node clients (node-redis wants a pooled one there). */
export class FamilyPooledCache extends BasicPooledClientSideCache {
  readonly families: FamilyEntries;
  constructor(prefixes: readonly string[]) {
    super(CACHE_CONFIG);
    this.families = new FamilyEntries(this, prefixes);
  }
  override trackingOn(): string[] {
    return trackingFor(this.families.prefixes);
  }
  override handleCache(...args: HandleArgs): Promise<unknown> {
    return this.families.handle(...args);
  }
}
