import { ClinAgentError } from '../core/errors.js';

export interface TextChunk {
  index: number;
  /** Always `text.slice(start, end)`, so a citation can be located in the source. */
  content: string;
  start: number;
  end: number;
}

export interface ChunkOptions {
  /** Smallest chunk, in characters, unless the text (or its last piece) is shorter. */
  minSize?: number;
  /** Largest chunk, in characters. */
  maxSize?: number;
  /** Least overlap between neighbouring chunks; the most is 1.5 times this. */
  overlap?: number;
}

// The design (section 6) asks for 800-1000 character chunks with 100-150 characters of overlap: big enough to
// hold a protocol paragraph with its context, small enough that a top-5 answer fits a prompt comfortably.
const DEFAULT_MIN_SIZE = 800;
const DEFAULT_MAX_SIZE = 1000;
const DEFAULT_OVERLAP = 100;

/** Ends a sentence anywhere: Chinese full stop, exclamation, question mark, semicolon, ellipsis; English !?; */
const SENTENCE_END = new Set(['。', '！', '？', '；', '…', '!', '?', ';', '．', '｡']);
/** Closing quotes and brackets stay with the sentence they close. */
const CLOSERS = new Set(['”', '’', '"', "'", '）', ')', '」', '』', '】', ']', '》', '…', '。', '！', '？']);
/** A clause break: better than cutting a word, worse than a sentence end. */
const CLAUSE_END = new Set(['，', '、', '：', ',', ':', '—']);

/** Boundary strength, best first; the chunker takes the last boundary of the best strength in its window. */
const Strength = { Paragraph: 4, Sentence: 3, Clause: 2, Word: 1 } as const;

const isSpace = (ch: string | undefined) => ch !== undefined && /\s/.test(ch);
const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;

/**
 * Splits text into overlapping chunks for retrieval. Each cut falls on the strongest boundary available
 * between minSize and maxSize characters: a blank line, then a sentence end (Chinese or English, or a line
 * break), then a clause break, then a space; only a run with none of these (a long table row, a base64 blob)
 * is cut hard. The next chunk starts 1x-1.5x `overlap` characters before the cut, at a sentence or word
 * start when there is one, so a fact that straddles a cut is whole in at least one chunk.
 */
export function chunkText(text: string, options: ChunkOptions = {}): TextChunk[] {
  const minSize = options.minSize ?? DEFAULT_MIN_SIZE;
  const maxSize = options.maxSize ?? DEFAULT_MAX_SIZE;
  const minOverlap = options.overlap ?? DEFAULT_OVERLAP;
  const maxOverlap = Math.floor(minOverlap * 1.5);
  validateOptions(minSize, maxSize, minOverlap, maxOverlap);
  if (text.trim() === '') {
    throw new ClinAgentError('VALIDATION_FAILED', 'text is empty or whitespace only, so there is nothing to chunk. Check that the file has a text layer (scanned PDFs need OCR first) and upload it again.', { field: 'text' });
  }

  const chunks: TextChunk[] = [];
  let start = skipSpace(text, 0);
  const textEnd = trimEnd(text, text.length, 0);
  while (start < textEnd) {
    const end = textEnd - start <= maxSize ? textEnd : findCut(text, start, minSize, maxSize);
    chunks.push({ index: chunks.length, content: text.slice(start, end), start, end });
    if (end >= textEnd) break;
    start = findNextStart(text, end, minOverlap, maxOverlap);
  }
  return chunks;
}

function validateOptions(minSize: number, maxSize: number, minOverlap: number, maxOverlap: number): void {
  const problems: string[] = [];
  if (!Number.isInteger(minSize) || minSize < 1) problems.push('minSize: must be a whole number of at least 1');
  if (!Number.isInteger(maxSize) || maxSize < minSize) problems.push('maxSize: must be a whole number not below minSize');
  if (!Number.isInteger(minOverlap) || minOverlap < 0) problems.push('overlap: must be a whole number of at least 0');
  // Otherwise the next chunk could start at or before the previous one and chunking would never finish.
  else if (maxOverlap >= minSize) problems.push(`overlap: 1.5 x overlap (${maxOverlap}) must stay below minSize (${minSize})`);
  if (problems.length) {
    throw new ClinAgentError('VALIDATION_FAILED', `Invalid chunk options:\n- ${problems.join('\n- ')}`, { problems });
  }
}

/** The end (exclusive) of the chunk starting at `start`: the last, strongest boundary in [start+min, start+max]. */
function findCut(text: string, start: number, minSize: number, maxSize: number): number {
  const from = start + minSize;
  const to = Math.min(start + maxSize, text.length);
  let best = -1;
  let bestStrength = 0;
  for (let end = to; end >= from; end--) {
    const strength = boundaryBefore(text, end);
    if (strength > bestStrength) {
      best = end;
      bestStrength = strength;
      if (strength === Strength.Paragraph) break;
    }
  }
  if (best >= 0) return best;
  // Hard cut; never between the two halves of a surrogate pair (emoji, rare CJK extension characters).
  return isHighSurrogate(text.charCodeAt(to - 1)) ? to - 1 : to;
}

/**
 * How good a place `end` is to end a chunk (text before it kept, text from it dropped), 0 if not a boundary.
 * A chunk never ends in whitespace, so `end` must follow a visible character.
 */
function boundaryBefore(text: string, end: number): number {
  const last = text[end - 1];
  const next = text[end];
  if (last === undefined || isSpace(last)) return 0;
  if (next !== undefined && CLOSERS.has(next)) return 0; // keep the closing quote with its sentence
  if (next === '\n' || next === '\r') {
    return /^[ \t]*\r?\n[ \t]*\r?\n/.test(text.slice(end, end + 16)) ? Strength.Paragraph : Strength.Sentence;
  }
  let at = end - 1;
  while (at > 0 && CLOSERS.has(text[at]!) && !SENTENCE_END.has(text[at]!)) at--;
  const mark = text[at]!;
  if (SENTENCE_END.has(mark)) return Strength.Sentence;
  // An English full stop ends a sentence only before a space; "3.5 mg" and "v1.2" must stay whole.
  if (mark === '.' && (next === undefined || isSpace(next))) return Strength.Sentence;
  if (CLAUSE_END.has(mark)) return Strength.Clause;
  if (next === undefined || isSpace(next)) return Strength.Word;
  return 0;
}

/** Where the chunk after one ending at `end` starts: minOverlap..maxOverlap back, at a sentence or word start. */
function findNextStart(text: string, end: number, minOverlap: number, maxOverlap: number): number {
  let wordStart = -1;
  for (let start = Math.max(1, end - maxOverlap); start <= end - minOverlap; start++) {
    if (isSpace(text[start])) continue;
    if (boundaryBefore(text, trimEnd(text, start, 0)) >= Strength.Sentence) return start;
    if (wordStart < 0 && isSpace(text[start - 1])) wordStart = start;
  }
  if (wordStart >= 0) return wordStart;
  const middle = end - Math.round((minOverlap + maxOverlap) / 2);
  return skipSpace(text, isHighSurrogate(text.charCodeAt(middle - 1)) ? middle - 1 : middle);
}

function skipSpace(text: string, at: number): number {
  while (at < text.length && isSpace(text[at])) at++;
  return at;
}

function trimEnd(text: string, at: number, floor: number): number {
  while (at > floor && isSpace(text[at - 1])) at--;
  return at;
}
