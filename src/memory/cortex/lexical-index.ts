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

/** The last query's distinct terms: a page searches three indexes for the same words. */
let lastQuery: string | undefined;
let lastTerms: readonly string[] = [];

function queryTerms(query: string): readonly string[] {
  if (query !== lastQuery) {
    lastTerms = [...new Set(tokenize(query))];
    lastQuery = query;
  }
  return lastTerms;
}

interface Posting {
  /** [slot, tf, slot, tf, ...], oldest first. */
  docs: number[];
  /** Live documents with the term (dead slots stay in `docs` and are skipped). */
  df: number;
}

export function createLexicalIndex<T>(): LexicalIndex<T> {
  const ids: string[] = [];
  const payloads: T[] = [];
  const lengths: number[] = [];
  const bounds: number[] = [];
  const alive: boolean[] = [];
  const slotOf = new Map<string, number>();
  /** One map lookup per term, whether indexing or searching. */
  const postings = new Map<string, Posting>();
  /** Each slot's postings, for a replaced document's live counts. */
  const terms: Posting[][] = [];
  let live = 0;
  let totalLength = 0;
  let scores = new Float64Array(64);
  /** Slots scored by the current search, in the order first scored. */
  let touched = new Int32Array(64);
  const top = createTopK();

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
        for (const p of terms[old]!) p.df--;
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
      const mine: Posting[] = [];
      terms.push(mine);
      slotOf.set(id, slot);
      live++;
      totalLength += tokens.length;
      for (const [term, n] of tf) {
        let p = postings.get(term);
        if (p) p.docs.push(slot, n);
        else {
          p = { docs: [slot, n], df: 0 };
          postings.set(term, p);
        }
        p.df++;
        mine.push(p);
      }
    },
    search(query, k, weight) {
      if (live === 0 || k <= 0) return [];
      if (scores.length < ids.length) {
        scores = new Float64Array(Math.max(ids.length, scores.length * 2));
        touched = new Int32Array(scores.length);
      }
      const avg = totalLength / live || 1;
      let count = 0;
      for (const term of queryTerms(query)) {
        const p = postings.get(term);
        if (!p || p.df === 0) continue;
        const { docs: list, df: n } = p;
        const idf = Math.log(1 + (live - n + 0.5) / (n + 0.5));
        for (let i = 0; i < list.length; i += 2) {
          const slot = list[i]!;
          if (!alive[slot]) continue;
          const tf = list[i + 1]!;
          if (scores[slot] === 0) touched[count++] = slot;
          scores[slot]! += (idf * tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * lengths[slot]!) / avg));
        }
      }
      top.reset(k);
      // Newest documents first: where the weight favours recent ones (recency), the heap fills with
      // the winners early and most older documents are turned away by one comparison.
      for (let j = count - 1; j >= 0; j--) {
        const slot = touched[j]!;
        const raw = scores[slot]!;
        scores[slot] = 0;
        if (!top.admits(raw * bounds[slot]!, slot)) continue;
        const w = weight ? weight(payloads[slot]!) : 1;
        if (w > 0) top.offer(slot, raw * w);
      }
      return top.drain((slot, score) => ({ id: ids[slot]!, payload: payloads[slot]!, score }));
    },
  };
}

/**
 * Keeps the k best (slot, score) pairs offered: higher score first, and between equal scores the
 * lower slot (the older document), so the result does not depend on the order of the offers. A
 * min-heap on that order in typed arrays, reused by every search of its index.
 */
function createTopK() {
  let slots = new Int32Array(16);
  let vals = new Float64Array(16);
  let size = 0;
  let k = 0;
  /** Heap entry i is worse than the pair (score, slot). */
  const worse = (i: number, score: number, slot: number) =>
    vals[i]! < score || (vals[i] === score && slots[i]! > slot);
  const place = (i: number, slot: number, score: number) => {
    slots[i] = slot;
    vals[i] = score;
  };
  /** Put (slot, score) at hole i or below it, moving better children up. */
  const down = (i: number, slot: number, score: number) => {
    for (;;) {
      const l = 2 * i + 1;
      if (l >= size) break;
      const r = l + 1;
      const m = r < size && worse(r, vals[l]!, slots[l]!) ? r : l;
      if (!worse(m, score, slot)) break;
      place(i, slots[m]!, vals[m]!);
      i = m;
    }
    place(i, slot, score);
  };
  return {
    reset(max: number) {
      k = max;
      size = 0;
      if (slots.length < k) {
        slots = new Int32Array(k);
        vals = new Float64Array(k);
      }
    },
    /** Whether a pair could enter: not full, or better than the worst kept. */
    admits: (score: number, slot: number) => size < k || worse(0, score, slot),
    offer(slot: number, score: number) {
      if (size < k) {
        let i = size++;
        // Up while the parent is better (slots are distinct: never equal).
        while (i > 0) {
          const p = (i - 1) >> 1;
          if (worse(p, score, slot)) break;
          place(i, slots[p]!, vals[p]!);
          i = p;
        }
        place(i, slot, score);
      } else if (worse(0, score, slot)) down(0, slot, score);
    },
    /** The pairs kept, best first; empties the heap. */
    drain<H>(hit: (slot: number, score: number) => H): H[] {
      const out = new Array<H>(size);
      while (size > 0) {
        const slot = slots[0]!;
        const score = vals[0]!;
        size--;
        if (size > 0) down(0, slots[size]!, vals[size]!);
        out[size] = hit(slot, score);
      }
      return out;
    },
  };
}
