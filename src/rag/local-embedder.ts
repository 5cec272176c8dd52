import type { Embedder } from '../core/embeddings.js';
import { ClinAgentError } from '../core/errors.js';

export const LOCAL_EMBEDDER_MODEL = 'local-hash-ngram-v1';
/** Small enough to keep 100k chunks in memory-cheap rows, large enough that hash collisions stay rare. */
const DEFAULT_DIMENSION = 256;
/** HNSW indexes `vector` columns up to 2000 dimensions; a hashed embedding gains nothing beyond that. */
const MAX_DIMENSION = 2000;

/** Feature kinds, each hashed with its own seed so the unigram "肝" and the word "肝" do not collide by design. */
const CJK_UNIGRAM = { seed: 0x9e3779b1, weight: 1 };
const CJK_BIGRAM = { seed: 0x85ebca6b, weight: 1 };
const WORD = { seed: 0xc2b2ae35, weight: 1 };
/** Trigrams match inflections and abbreviations ("randomised"/"randomized"), but weigh less than whole words. */
const TRIGRAM = { seed: 0x27d4eb2f, weight: 0.5 };
const FALLBACK_CHAR = { seed: 0x165667b1, weight: 1 };

/** Words that occur in every English passage; matching them says nothing about the topic. */
const EN_STOPWORDS = new Set(
  'a an and are as at be by for from has have if in into is it its of on or that the their then there these this to was were will with'.split(' '),
);
/** Chinese function characters: kept inside bigrams, dropped as unigrams. */
const ZH_STOP_CHARS = new Set('的了在是和与及或其之而被为对'.split(''));

const CJK = '\\p{sc=Han}\\p{sc=Hiragana}\\p{sc=Katakana}\\p{sc=Hangul}';
/** A run of CJK characters, or a run of other letters and digits (a Latin word, a number, "hba1c"). */
const TOKEN_RUN = new RegExp(`[${CJK}]+|(?:(?![${CJK}])[\\p{L}\\p{N}\\p{M}])+`, 'gu');

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

type Features = Map<number, { count: number; weight: number }>;

function embedOne(text: string, dimension: number): number[] {
  const normalized = text.normalize('NFKC').toLowerCase();
  const features: Features = new Map();
  for (const match of normalized.matchAll(TOKEN_RUN)) {
    const run = match[0];
    if (isCjkRun(run)) addCjkFeatures(features, run);
    else addWordFeatures(features, run);
  }
  // Text with no letters or digits at all (a row of symbols) still gets a vector, from its characters.
  if (features.size === 0) {
    for (const ch of normalized) if (!/\s/u.test(ch)) add(features, hash(FALLBACK_CHAR.seed, ch), FALLBACK_CHAR.weight);
  }
  const vector = new Array<number>(dimension).fill(0);
  for (const [h, { count, weight }] of features) {
    const mixed = fmix32(h);
    vector[mixed % dimension]! += (mixed & 0x80000000 ? -1 : 1) * weight * (1 + Math.log(count));
  }
  let norm = 0;
  for (const x of vector) norm += x * x;
  norm = Math.sqrt(norm);
  return norm === 0 ? vector : vector.map((x) => x / norm);
}

const CJK_TEST = new RegExp(`^[${CJK}]`, 'u');
function isCjkRun(run: string): boolean {
  return CJK_TEST.test(run);
}

function addCjkFeatures(features: Features, run: string): void {
  const chars = Array.from(run);
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i]!;
    if (!ZH_STOP_CHARS.has(ch)) add(features, hash(CJK_UNIGRAM.seed, ch), CJK_UNIGRAM.weight);
    if (i + 1 < chars.length) add(features, hash(CJK_BIGRAM.seed, ch + chars[i + 1]!), CJK_BIGRAM.weight);
  }
}

function addWordFeatures(features: Features, word: string): void {
  if (EN_STOPWORDS.has(word)) return;
  add(features, hash(WORD.seed, word), WORD.weight);
  const padded = `^${word}$`;
  for (let i = 0; i + 3 <= padded.length; i++) add(features, hash(TRIGRAM.seed, padded.slice(i, i + 3)), TRIGRAM.weight);
}

function add(features: Features, h: number, weight: number): void {
  const feature = features.get(h);
  if (feature) feature.count++;
  else features.set(h, { count: 1, weight });
}

/** FNV-1a over UTF-16 code units, started from a per-kind seed. Stable across platforms and releases. */
function hash(seed: number, text: string): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
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
