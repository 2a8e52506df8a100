/** A small TTL cache in front of a Web API lookup; concurrent asks for one key share one call. */
export function createLookupCache<T>(
  fetch: (key: string) => Promise<T>,
  ttlMs: number,
  max: number,
): (key: string) => Promise<T> {
  const cache = new Map<string, { value: T; at: number }>();
  const inflight = new Map<string, Promise<T>>();
  return async (key) => {
    const hit = cache.get(key);
    if (hit && Date.now() - hit.at < ttlMs) return hit.value;
    const running = inflight.get(key);
    if (running) return running;
    const p = fetch(key)
      .then((value) => {
        if (cache.size >= max) cache.delete(cache.keys().next().value as string);
        cache.set(key, { value, at: Date.now() });
        return value;
      })
      .finally(() => inflight.delete(key));
    inflight.set(key, p);
    return p;
  };
}
