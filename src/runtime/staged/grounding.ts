/**
 * Grounding: is a value the model wants to record backed by what the user said or a tool computed? A staged agent
 * writes the protocol from the conversation, and a model asked to fill a schema fills it: a sample size of 200 the
 * researcher never gave, an "80% power" it assumed. The model must never record what the user did not say, so
 * every leaf of the extracted data is checked against the sources (the user's messages, this turn's tool results,
 * the context already recorded) and a leaf that fails is dropped with the reason. The rules:
 *
 * - Numbers must appear as numbers in the sources. Text is normalised first (NFKC: full-width ０.０５ and ％ become
 *   0.05 and %), numbers inside words count ("n=128"), thousands separators are read (1,234 = 1234), a leading
 *   dot is read (.05 = 0.05) and a percentage counts as itself and as a fraction (5% grounds 5 and 0.05). Signs
 *   are ignored: "day -7" and "7 days before" both ground -7, since which way a number points is the model's
 *   reading of the sentence, while the number itself must have been said.
 * - Strings: every number inside them must be grounded as above, and they must share enough content with the
 *   sources: English words of three letters or more (case-insensitive, without a few stop words, with plural and
 *   -ed/-ing endings removed) and Chinese character pairs (bigrams; a lone character counts alone). At least a third
 *   of the string's content tokens, or at least three of them, must appear in the sources. A model paraphrases and
 *   translates (the user writes Chinese, the schema asks for English), so demanding every word would refuse honest
 *   summaries; a third still refuses a sentence about something else.
 * - Short enum-like strings ('two_means', 'RCT', 'double-blind'): a Latin-script string of at most three words is a
 *   label, and passes only when all its tokens appear in the sources, since one word of three is no evidence for a
 *   label. Any string equal to one of the schema's enum values for the field passes: the model is told to normalise
 *   to those values ("双盲" becomes 'double-blind') and the schema already bounds them.
 * - A string with neither content tokens nor numbers (a symbol, a two-letter word) must appear in the sources as is.
 * - Booleans have no words of their own: one is accepted only when the key it is recorded under (`isBlinded`,
 *   `placebo_controlled`) shares a content word with the sources, so the subject at least came up.
 */

/** Sources indexed once for all the leaves of one extraction. */
export interface GroundingSources {
  readonly text: string;
  readonly numbers: ReadonlySet<string>;
  readonly tokens: ReadonlySet<string>;
}

interface GroundingOptions {
  /** The schema's enum values for the field, which a string may equal without being said word for word. */
  enumValues?: readonly unknown[];
  /** The key the value is recorded under (the last named segment of its path); booleans need it. */
  key?: string;
}

const NOT_SAID = 'what the user said or a tool computed';

/** Words of three letters or more that carry no content: matching them would ground anything. */
const STOP_WORDS = new Set(
  'the and for with from that this these those are was were will would should could has have had been being not but its into than then them they their there which who whom what when where why how all any each per via our you your can may might must also only such very more most less few some other over under about after before between both while'.split(
    ' ',
  ),
);

/** A short string: at most this many words, so it reads as a label rather than a sentence. */
const MAX_LABEL_WORDS = 3;

const NUMBER = /(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|\.\d+/g;

export function indexSources(sources: readonly string[]): GroundingSources {
  const text = normalise(sources.join('\n'));
  // Single characters too, so a value's lone character ("岁" in "≥65岁") finds its use inside a longer run.
  const hanCharacters = text.match(/\p{Script=Han}/gu) ?? [];
  // "64,128" is 64128 to a reader of thousands separators and "64 and 128" to one who wrote a list with a Chinese
  // comma (NFKC makes "，" a ","): in the sources both readings count.
  const numbers = new Set([...numberReadings(text), ...numberReadings(text.replace(/,/g, ' '))].flat());
  return { text, numbers, tokens: new Set([...contentTokens(text), ...hanCharacters]) };
}

/** Why the value is not grounded in the sources, or undefined when it is. Call it on leaves (not objects or arrays). */
export function groundingProblem(value: unknown, sources: readonly string[] | GroundingSources, options: GroundingOptions = {}): string | undefined {
  const index = isIndexed(sources) ? sources : indexSources(sources);
  if (typeof value === 'number') {
    return index.numbers.has(numberKey(value)) ? undefined : `${value} was not found in ${NOT_SAID}`;
  }
  if (typeof value === 'boolean') {
    const keyTokens = options.key ? contentTokens(normalise(splitCamelCase(options.key))) : [];
    if (keyTokens.some((token) => index.tokens.has(token))) return undefined;
    return `${value} was not found in ${NOT_SAID}: "${options.key ?? 'this field'}" did not come up`;
  }
  if (typeof value === 'string') return stringProblem(value, index, options);
  return `a ${value === null ? 'null' : typeof value} cannot be checked against ${NOT_SAID}`;
}

function stringProblem(value: string, index: GroundingSources, options: GroundingOptions): string | undefined {
  if (options.enumValues?.some((allowed) => allowed === value)) return undefined;
  const text = normalise(value);
  const readings = numberReadings(text);
  const missingNumbers = readings.filter((keys) => !keys.some((key) => index.numbers.has(key))).map((keys) => keys[0]);
  if (missingNumbers.length) return `the number ${missingNumbers.join(', ')} in "${clip(value)}" was not found in ${NOT_SAID}`;

  const tokens = [...new Set(contentTokens(text))];
  if (tokens.length === 0) {
    if (readings.length > 0 || index.text.toLowerCase().includes(text.trim().toLowerCase())) return undefined;
    return `"${clip(value)}" was not found in ${NOT_SAID}`;
  }
  const found = tokens.filter((token) => index.tokens.has(token)).length;
  if (found === tokens.length) return undefined;
  const label = isLabel(text);
  if (!label && (found * 3 >= tokens.length || found >= 3)) return undefined;
  return `"${clip(value)}" shares too little with ${NOT_SAID} (${found} of ${tokens.length} words found${label ? '; a short label must be said or be one of the allowed values' : ''})`;
}

function isIndexed(sources: readonly string[] | GroundingSources): sources is GroundingSources {
  return !Array.isArray(sources);
}

function normalise(text: string): string {
  return text.normalize('NFKC');
}

/**
 * Each number written in the text, as the keys (see numberKey) it may be read as: itself, and for a percentage
 * also the fraction, so "5%" grounds 0.05 and a value "alpha 5%" is grounded by a source saying 0.05. Spelt-out
 * numbers ("百分之五", "five") are not read: the model must then leave the number to the user or a tool.
 */
function numberReadings(text: string): string[][] {
  const readings: string[][] = [];
  for (const match of text.matchAll(NUMBER)) {
    const value = Number(match[0].replace(/,/g, ''));
    if (!Number.isFinite(value)) continue;
    const keys = [numberKey(value)];
    const after = text.slice(match.index + match[0].length).trimStart().toLowerCase();
    if (after.startsWith('%') || after.startsWith('percent') || after.startsWith('per cent')) keys.push(numberKey(value / 100));
    readings.push(keys);
  }
  return readings;
}

/** Twelve significant digits: 5 / 100 and 0.05 compare equal, while 0.05 and 0.051 do not. */
function numberKey(value: number): string {
  return String(Number(Math.abs(value).toPrecision(12)));
}

function contentTokens(text: string): string[] {
  const tokens: string[] = [];
  for (const word of text.toLowerCase().match(/[a-z]{3,}/g) ?? []) {
    if (!STOP_WORDS.has(word)) tokens.push(stem(word));
  }
  for (const run of text.match(/\p{Script=Han}+/gu) ?? []) {
    const chars = [...run];
    if (chars.length === 1) tokens.push(chars[0]!);
    for (let i = 0; i + 1 < chars.length; i++) tokens.push(chars[i]! + chars[i + 1]!);
  }
  return tokens;
}

/** Plurals and -ed/-ing: enough for "patients" to find "patient" and "blinded" to find "blind". */
function stem(word: string): string {
  if (word.length > 4 && word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  if (word.length > 5 && word.endsWith('ing')) return word.slice(0, -3);
  if (word.length > 5 && word.endsWith('ed')) return word.slice(0, -2);
  if (word.length > 3 && word.endsWith('s') && !/(ss|us|is)$/.test(word)) return word.slice(0, -1);
  return word;
}

/**
 * A label: Latin-script text of at most three words (`two_means` and `double-blind` count one each). Chinese text
 * is never treated as a label: it has no spaces to count words by, and its character pairs already make even a
 * short phrase ("12周收缩压变化") several tokens that the one-third rule judges well.
 */
function isLabel(text: string): boolean {
  if (/\p{Script=Han}/u.test(text)) return false;
  return text.trim().split(/\s+/).filter(Boolean).length <= MAX_LABEL_WORDS;
}

function splitCamelCase(key: string): string {
  return key.replace(/([a-z])([A-Z])/g, '$1 $2').replace(/[_-]+/g, ' ');
}

function clip(text: string): string {
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
