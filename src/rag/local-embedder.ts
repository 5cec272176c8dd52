import type { Embedder } from '../core/embeddings.js';
import { ClinAgentError } from '../core/errors.js';

export const LOCAL_EMBEDDER_MODEL = 'local-hash-ngram-v1';
/** Small enough to keep 100k chunks in memory-cheap rows, large enough that hash collisions stay rare. */
const DEFAULT_DIMENSION = 256;
/** HNSW indexes `vector` columns up to 2000 dimensions; a hashed embedding gains nothing beyond that. */
const MAX_DIMENSION = 2000;

/** Each feature kind is hashed with its own seed, so the unigram "肝" and the word "肝" never collide by design. */
const SEED_CJK_UNIGRAM = 0x9e3779b1;
const SEED_CJK_BIGRAM = 0x85ebca6b;
const SEED_WORD = 0xc2b2ae35;
const SEED_TRIGRAM = 0x27d4eb2f;
const SEED_FALLBACK_CHAR = 0x165667b1;
/** Trigrams match inflections and abbreviations ("randomised"/"randomized") but weigh less than whole words. */
const TRIGRAM_WEIGHT = 0.5;

/** Words that occur in every English passage; matching them says nothing about the topic. */
const EN_STOPWORDS = new Set(
  'a an and are as at be by for from has have if in into is it its of on or that the their then there these this to was were will with'.split(' '),
);
/** Chinese function characters: kept inside bigrams, dropped as unigrams. */
const ZH_STOP_CHARS = new Set(Array.from('的了在是和与及或其之而被为对', (ch) => ch.codePointAt(0)!));

/**
 * An offline, deterministic embedder: hashed character n-grams (feature hashing with a sign hash, so
 * collisions cancel out instead of piling up), sublinear term frequency, L2-normalised. It knows no
 * synonyms, but texts sharing terms score clearly higher than unrelated ones in Chinese and English, which
 * is what a default needs to make RAG work with no model server. Point EMBEDDING_MODEL at a real model for
 * semantic recall.
 */
export function createLocalEmbedder(options: { dimension?: number } = {}): Embedder {
  const dimension = options.dimension ?? DEFAULT_DIMENSION;
  if (!Number.isInteger(dimension) || dimension < 16 || dimension > MAX_DIMENSION) {
    throw new ClinAgentError('VALIDATION_FAILED', `Local embedder dimension must be a whole number from 16 to ${MAX_DIMENSION}, got ${String(options.dimension)}.`, { field: 'dimension' });
  }
  // The model id names the dimension, so a collection built at 256 refuses 512-dimension queries by name.
  const model = dimension === DEFAULT_DIMENSION ? LOCAL_EMBEDDER_MODEL : `${LOCAL_EMBEDDER_MODEL}-${dimension}`;
  return {
    model,
    dimension,
    async embed(texts) {
      return texts.map((text) => embedOne(text, dimension));
    },
  };
}

/** Feature hash -> occurrence count, one map per weight. */
interface Features {
  whole: Map<number, number>;
  trigram: Map<number, number>;
}

/**
 * One pass over the code points, without building a string per n-gram: the embedder must keep up with
 * bulk ingestion (several thousand chunks per second on one core).
 */
function embedOne(text: string, dimension: number): number[] {
  const s = text.normalize('NFKC').toLowerCase();
  const features: Features = { whole: new Map(), trigram: new Map() };
  let i = 0;
  while (i < s.length) {
    const cp = s.codePointAt(i)!;
    if (isCjk(cp)) {
      let previous = -1;
      while (i < s.length) {
        const c = s.codePointAt(i)!;
        if (!isCjk(c)) break;
        if (!ZH_STOP_CHARS.has(c)) bump(features.whole, hashCodePoints(SEED_CJK_UNIGRAM, c));
        if (previous >= 0) bump(features.whole, hashCodePoints(SEED_CJK_BIGRAM, previous, c));
        previous = c;
        i += c > 0xffff ? 2 : 1;
      }
    } else if (isWordChar(cp)) {
      const start = i;
      while (i < s.length) {
        const c = s.codePointAt(i)!;
        if (isCjk(c) || !isWordChar(c)) break;
        i += c > 0xffff ? 2 : 1;
      }
      addWordFeatures(features, s.slice(start, i));
    } else {
      i += cp > 0xffff ? 2 : 1;
    }
  }
  // Text with no letters or digits at all (a row of symbols) still gets a vector, from its characters.
  if (features.whole.size === 0 && features.trigram.size === 0) {
    for (const ch of s) if (!/\s/u.test(ch)) bump(features.whole, hashCodePoints(SEED_FALLBACK_CHAR, ch.codePointAt(0)!));
  }
  const vector = new Array<number>(dimension).fill(0);
  addToVector(vector, features.whole, 1);
  addToVector(vector, features.trigram, TRIGRAM_WEIGHT);
  let norm = 0;
  for (const x of vector) norm += x * x;
  norm = Math.sqrt(norm);
  return norm === 0 ? vector : vector.map((x) => x / norm);
}

/** Feature hashing with a sign hash (collisions cancel out on average) and sublinear term frequency. */
function addToVector(vector: number[], counts: Map<number, number>, weight: number): void {
  for (const [h, count] of counts) {
    const mixed = fmix32(h);
    vector[mixed % vector.length]! += (mixed & 0x80000000 ? -1 : 1) * weight * (1 + Math.log(count));
  }
}

/** Han, kana and Hangul: scripts written without spaces, embedded as character unigrams and bigrams. */
function isCjk(cp: number): boolean {
  return (
    (cp >= 0x4e00 && cp <= 0x9fff) || // CJK unified ideographs
    (cp >= 0x3400 && cp <= 0x4dbf) || // extension A
    (cp >= 0x3040 && cp <= 0x30ff) || // hiragana, katakana
    (cp >= 0xac00 && cp <= 0xd7af) || // Hangul syllables
    (cp >= 0xf900 && cp <= 0xfaff) || // compatibility ideographs
    (cp >= 0x20000 && cp <= 0x3134f) // extensions B-G
  );
}

const LETTER_OR_DIGIT = /[\p{L}\p{N}\p{M}]/u;
function isWordChar(cp: number): boolean {
  if (cp < 0x80) return (cp >= 0x61 && cp <= 0x7a) || (cp >= 0x30 && cp <= 0x39); // input is lower-cased
  return LETTER_OR_DIGIT.test(String.fromCodePoint(cp));
}

function addWordFeatures(features: Features, word: string): void {
  if (EN_STOPWORDS.has(word)) return;
  bump(features.whole, hashString(SEED_WORD, word));
  const padded = `^${word}$`;
  for (let i = 0; i + 3 <= padded.length; i++) bump(features.trigram, hashString(SEED_TRIGRAM, padded, i, i + 3));
}

function bump(counts: Map<number, number>, h: number): void {
  counts.set(h, (counts.get(h) ?? 0) + 1);
}

/** FNV-1a over code points, from a per-kind seed. Stable across platforms and releases. */
function hashCodePoints(seed: number, a: number, b = -1): number {
  let h = Math.imul((0x811c9dc5 ^ seed) ^ a, 0x01000193);
  if (b >= 0) h = Math.imul(h ^ b, 0x01000193);
  return h >>> 0;
}

/** FNV-1a over the UTF-16 code units of text[from, to), from a per-kind seed. */
function hashString(seed: number, text: string, from = 0, to = text.length): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = from; i < to; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** MurmurHash3's finaliser: spreads FNV's weak low bits, so `% dimension` and the sign bit are independent. */
function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
