/**
 * An in-process BM25 index over short documents (records, turns). Redis here has no search
 * module, so ranking happens in process over a per-user cache (see user-view.ts). Documents live in
 * numbered slots so a search accumulates scores in a flat array, and only the top k survive
 * (a small heap), which keeps a fault over 10,000 records well under a millisecond of CPU.
 */
import { tokenize } from "./text.js";

const K1 = 1.2;
const B = 0.75;

export interface Hit<T> {
  id: string;
  payload: T;
  score: number;
}

export interface LexicalIndex<T> {
  /**
   * Add or replace a document. `bound` is an upper bound of any weight a search will give it
   * (default 1): documents whose BM25 × bound cannot enter the top k are skipped unweighed.
   */
  upsert(id: string, text: string, payload: T, bound?: number): void;
  /**
   * The `k` best documents sharing a term with the query, by BM25 × `weight(payload)`, best first.
   * A weight of 0 excludes the document; a weight never exceeds the document's `bound`.
   */
  search(query: string, k: number, weight?: (payload: T) => number): Hit<T>[];
  readonly size: number;
}

export function createLexicalIndex<T>(): LexicalIndex<T> {
  const ids: string[] = [];
  const payloads: T[] = [];
  const lengths: number[] = [];
  const bounds: number[] = [];
  const alive: boolean[] = [];
  const slotOf = new Map<string, number>();
  /** term → [slot, tf, slot, tf, ...] */
  const postings = new Map<string, number[]>();
  /** Live documents per term (dead slots stay in postings and are skipped). */
  const df = new Map<string, number>();
  const terms: Map<string, number>[] = [];
  let live = 0;
  let totalLength = 0;
  let scores = new Float64Array(64);

  return {
    get size() {
      return live;
    },
    upsert(id, text, payload, bound = 1) {
      const old = slotOf.get(id);
      if (old !== undefined) {
        alive[old] = false;
        live--;
        totalLength -= lengths[old]!;
        for (const term of terms[old]!.keys()) df.set(term, df.get(term)! - 1);
      }
      const slot = ids.length;
      const tokens = tokenize(text);
      const tf = new Map<string, number>();
      for (const t of tokens) tf.set(t, (tf.get(t) ?? 0) + 1);
      ids.push(id);
      payloads.push(payload);
      lengths.push(tokens.length);
      bounds.push(bound);
      alive.push(true);
      terms.push(tf);
      slotOf.set(id, slot);
      live++;
      totalLength += tokens.length;
      for (const [term, n] of tf) {
        const list = postings.get(term);
        if (list) list.push(slot, n);
        else postings.set(term, [slot, n]);
        df.set(term, (df.get(term) ?? 0) + 1);
      }
    },
    search(query, k, weight) {
      if (live === 0 || k <= 0) return [];
      if (scores.length < ids.length) scores = new Float64Array(Math.max(ids.length, scores.length * 2));
      const avg = totalLength / live || 1;
      const touched: number[] = [];
      for (const term of new Set(tokenize(query))) {
        const list = postings.get(term);
        const n = df.get(term) ?? 0;
        if (!list || n === 0) continue;
        const idf = Math.log(1 + (live - n + 0.5) / (n + 0.5));
        for (let i = 0; i < list.length; i += 2) {
          const slot = list[i]!;
          if (!alive[slot]) continue;
          const tf = list[i + 1]!;
          if (scores[slot] === 0) touched.push(slot);
          scores[slot]! += (idf * tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * lengths[slot]!) / avg));
        }
      }
      const heap = createTopK(k);
      for (const slot of touched) {
        const raw = scores[slot]!;
        scores[slot] = 0;
        if (heap.full() && raw * bounds[slot]! <= heap.min()) continue;
        const w = weight ? weight(payloads[slot]!) : 1;
        if (w > 0) heap.offer(slot, raw * w);
      }
      return heap.sorted().map(([slot, score]) => ({ id: ids[slot]!, payload: payloads[slot]!, score }));
    },
  };
}

/** Keeps the k highest-scoring items seen (a min-heap on score). */
function createTopK(k: number) {
  const slots: number[] = [];
  const vals: number[] = [];
  const swap = (a: number, b: number) => {
    [slots[a], slots[b]] = [slots[b]!, slots[a]!];
    [vals[a], vals[b]] = [vals[b]!, vals[a]!];
  };
  const down = (i: number) => {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < vals.length && vals[l]! < vals[m]!) m = l;
      if (r < vals.length && vals[r]! < vals[m]!) m = r;
      if (m === i) return;
      swap(i, m);
      i = m;
    }
  };
  return {
    full: () => vals.length >= k,
    min: () => vals[0] ?? Number.NEGATIVE_INFINITY,
    offer(slot: number, score: number) {
      if (vals.length < k) {
        slots.push(slot);
        vals.push(score);
        for (let i = vals.length - 1; i > 0; ) {
          const p = (i - 1) >> 1;
          if (vals[p]! <= vals[i]!) break;
          swap(i, p);
          i = p;
        }
      } else if (score > vals[0]!) {
        slots[0] = slot;
        vals[0] = score;
        down(0);
      }
    },
    sorted(): [number, number][] {
      return slots.map((s, i) => [s, vals[i]!] as [number, number]).sort((a, b) => b[1] - a[1]);
    },
  };
}
