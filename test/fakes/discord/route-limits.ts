/**
 * Discord's per-route limits, as the fake enforces them when asked (`routeLimits`). Discord keeps a
 * bucket per route and top-level resource (a channel here) for the bot, says where it stands in every
 * answer's `X-RateLimit-Limit`, `-Remaining`, `-Reset-After` and `-Bucket`, and answers a request
 * beyond it 429 with `X-RateLimit-Scope: user` and `Retry-After`
 * (discord.com/developers/docs/topics/rate-limits#header-format). A bucket's window starts with its
 * first request and resets whole, as `Reset-After` counts down. Discord does not publish the numbers
 * ("should not be hard coded"); these are the ones its docs once listed and libraries still quote
 * (e.g. javacord.org/wiki/advanced-topics/ratelimits.html): sending a message 5 per 5 s per channel
 * (edits share that bucket, as JDA found: github.com/discord-jda/JDA/pull/1103), deleting one 5 per
 * 1 s per channel, a reaction 1 per 0.25 s per channel. Requests of every client count together.
 */

interface RouteRule {
  /** The `X-RateLimit-Bucket` it reports (the same for every channel, as Discord's hash is). */
  bucket: string;
  methods: string[];
  /** Group 1 is the channel (the top-level resource). */
  path: RegExp;
  limit: number;
  windowMs: number;
}

export const ROUTE_RULES: RouteRule[] = [
  {
    bucket: "reaction",
    methods: ["PUT", "DELETE"],
    path: /^\/channels\/(\d+)\/messages\/\d+\/reactions\//,
    limit: 1,
    windowMs: 250,
  },
  {
    bucket: "message-write",
    methods: ["POST", "PATCH"],
    path: /^\/channels\/(\d+)\/messages(?:\/\d+)?$/,
    limit: 5,
    windowMs: 5000,
  },
  {
    bucket: "message-delete",
    methods: ["DELETE"],
    path: /^\/channels\/(\d+)\/messages\/\d+$/,
    limit: 5,
    windowMs: 1000,
  },
];

/** A request the fake refused for a per-route limit. */
export interface RouteRefusal {
  /** `<bucket>:<channel>`. */
  key: string;
  /** When the bucket's window began (ms since the epoch): one window over its limit per distinct value. */
  windowStart: number;
  at: number;
}

export interface RouteVerdict {
  /** The rate-limit headers for the answer (a refusal's included). */
  headers: Record<string, string>;
  /** Refused: answer 429 and wait this long (ms). */
  retryAfterMs?: number;
}

export interface RouteLimits {
  /** Room for a bot request arriving at `now` on `method path`; undefined for a route without a rule. */
  take(method: string, path: string, now: number): RouteVerdict | undefined;
  refusals: RouteRefusal[];
}

export function createRouteLimits(): RouteLimits {
  const buckets = new Map<string, { count: number; start: number }>();
  const refusals: RouteRefusal[] = [];
  return {
    refusals,
    take(method, path, now) {
      const rule = ROUTE_RULES.find((r) => r.methods.includes(method) && r.path.test(path));
      if (!rule) return undefined;
      const key = `${rule.bucket}:${rule.path.exec(path)![1]}`;
      let b = buckets.get(key);
      if (!b || now >= b.start + rule.windowMs) {
        b = { count: 0, start: now };
        buckets.set(key, b);
      }
      const resetAfterMs = b.start + rule.windowMs - now;
      const refused = b.count >= rule.limit;
      if (!refused) b.count++;
      const headers = {
        "x-ratelimit-limit": String(rule.limit),
        "x-ratelimit-remaining": String(rule.limit - b.count),
        "x-ratelimit-reset": ((b.start + rule.windowMs) / 1000).toFixed(3),
        "x-ratelimit-reset-after": (resetAfterMs / 1000).toFixed(3),
        "x-ratelimit-bucket": rule.bucket,
      };
      if (!refused) return { headers };
      refusals.push({ key, windowStart: b.start, at: now });
      return {
        headers: {
          ...headers,
          "x-ratelimit-scope": "user",
          "retry-after": (resetAfterMs / 1000).toFixed(3),
        },
        retryAfterMs: resetAfterMs,
      };
    },
  };
}
