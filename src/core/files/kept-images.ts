/**
 * Images of running turns, in this process's memory only: the store (and so its log) never holds
 * image bytes. A turn reads its images from here on every request and releases them when it ends;
 * a turn resumed elsewhere (a restart, another instance) fetches them again from the platform.
 * Entries a turn never released (it was cancelled and no turn followed) go after `TTL_MS`.
 */

const TTL_MS = 60 * 60 * 1000;

interface Kept {
  sha256: string;
  dataUrl: string;
  at: number;
}

export interface KeptImages {
  get(conversation: string, fileId: string, sha256: string): string | undefined;
  set(conversation: string, fileId: string, sha256: string, dataUrl: string): void;
  delete(conversation: string, fileId: string): void;
  /** Bytes held (for tests and metrics). */
  bytes(): number;
}

export function createKeptImages(now: () => number = Date.now): KeptImages {
  const kept = new Map<string, Kept>();
  const key = (conversation: string, fileId: string) => `${conversation}\u0000${fileId}`;
  const sweep = () => {
    for (const [k, v] of kept) if (now() - v.at > TTL_MS) kept.delete(k);
  };
  return {
    get(conversation, fileId, sha256) {
      sweep();
      const k = kept.get(key(conversation, fileId));
      return k && k.sha256 === sha256 ? k.dataUrl : undefined;
    },
    set(conversation, fileId, sha256, dataUrl) {
      sweep();
      kept.set(key(conversation, fileId), { sha256, dataUrl, at: now() });
    },
    delete(conversation, fileId) {
      kept.delete(key(conversation, fileId));
    },
    bytes: () => [...kept.values()].reduce((n, k) => n + k.dataUrl.length, 0),
  };
}
