/**
 * Reading what a patient (or the model, on the patient's behalf) wrote, in Chinese or English, deterministically:
 * normalise, split into clauses, and find terms that are affirmed, not negated. A NegEx-style reading, kept small
 * on purpose: the safety check must be explainable line by line, so there is no model and no fuzzy matching here.
 *
 * - Normalise: NFKC (full-width letters and digits, "℃" becomes "°c", "，" becomes ","), curly apostrophes
 *   straight, then lower case.
 * - Clauses: negation does not cross punctuation (, . ; ! ? and their Chinese forms, 、), a line break, or
 *   "but / however / 但(是) / 可是 / 然而": "no fever, rash all over" affirms the rash. Splitting on "、" is
 *   deliberate: "无发热、水疱" then affirms the blisters, and over-reading a sign is the safe side of a triage.
 * - A term is negated when a negation cue stands before it in its clause, close to it: at most 4 words between
 *   an English cue ("no", "not", "without", "denies", "negative for", "n't", ...) and the term; at most 4
 *   characters between a Chinese cue (没有, 没, 无, 不, 未, 否认, 并无, 未见) and the term ("无明显发热"). It is also
 *   negated when a negative answer follows it ("fever: no", "发热：无").
 * - Pseudo-negations are removed before looking for cues: words that contain a cue but do not deny anything
 *   ("不断扩散" keeps spreading, "非常痛" very painful, "无法呼吸" cannot breathe, "无明显诱因" no obvious
 *   trigger, "not only", "not sure"). Uncertainty counts as present: "not sure if fever" is read as fever.
 * - A term that itself contains a cue ("边缘不规则", "喘不过气", "can't breathe") is one term: only the text before
 *   it is searched for cues.
 */

export function normaliseText(text: string): string {
  // Curly apostrophes too, so "can’t breathe" reads as "can't breathe".
  return text.normalize('NFKC').replace(/[‘’]/g, "'").toLowerCase();
}

const CLAUSE_BREAK = /[,;!?，。；！？、\n]|\.(?=\s|$)|\bbut\b|\bhowever\b|\bthough\b|但是|但|可是|然而/u;

export function splitClauses(text: string): string[] {
  return normaliseText(text)
    .split(new RegExp(CLAUSE_BREAK.source, 'gu'))
    .map((clause) => clause.trim())
    .filter((clause) => clause.length > 0);
}

const PSEUDO_NEGATIONS = [
  // Chinese words that contain 不/无/非/没/未 without denying the term that follows.
  '不仅', '不但', '不只', '不止', '不断', '不停', '不退', '不适', '不舒服', '不对称', '不规则', '不均', '不明',
  '不少', '不久', '不到', '不知道', '不确定', '不清楚', '不小心', '不好', '不能', '无法', '无缘无故', '无明显诱因',
  '无诱因', '无明显原因', '非常', '没多久', '没几天', '没想到', '未知',
  // English phrases that contain a cue without denying the term.
  'not only', 'not sure', 'not certain', 'unsure', 'no idea whether', 'no idea if', "don't know", 'do not know',
  'not clear', 'no longer sure', "can't tell", 'cannot tell', "can't breathe", 'cannot breathe', "can't swallow",
  'no reason', 'no obvious reason', 'no obvious cause', 'not stop', "won't stop", "doesn't stop", "isn't stopping",
];

const EN_CUE = /(?:^|[^a-z])(?:no|not|without|denies|denied|deny|negative for|free of|never|none|absence of|absent)(?![a-z])|n't(?![a-z])/g;
const ZH_CUE = /没有|并无|未见|否认|没|无|不|未/g;
const AFTER_NEGATIVE = /^\s*[:：=\-]?\s*(?:无|没有|否|否认|阴性|(?:no|none|denied|negative|absent)(?![a-z]))/u;

const EN_WINDOW_WORDS = 4;
const ZH_WINDOW_CHARS = 4;

/** A term list compiled once: each entry a regular-expression fragment (so "fevers?" and "rash(?:es)?" work). */
export interface TermSet {
  readonly label: string;
  readonly pattern: RegExp;
}

/**
 * English fragments get word boundaries on their Latin ends ("febrile" must not match inside "afebrile", "red"
 * not inside "reduce"); Chinese fragments match anywhere, as Chinese has no spaces.
 */
export function terms(label: string, fragments: readonly string[]): TermSet {
  const parts = fragments.map((fragment) => {
    const startsLatin = /^[a-z]/.test(fragment);
    const endsLatin = /[a-z]$/.test(fragment) || /[a-z]\)[?*]?$/.test(fragment) || /[a-z][?*]$/.test(fragment);
    return `${startsLatin ? '(?<![a-z])' : ''}(?:${fragment})${endsLatin ? '(?![a-z])' : ''}`;
  });
  return { label, pattern: new RegExp(parts.join('|'), 'gu') };
}

function maskPseudoNegations(text: string): string {
  let masked = text;
  for (const phrase of PSEUDO_NEGATIONS) {
    if (masked.includes(phrase)) masked = masked.split(phrase).join(' '.repeat(phrase.length));
  }
  return masked;
}

function negatedBefore(prefix: string): boolean {
  const masked = maskPseudoNegations(prefix);
  for (const cue of masked.matchAll(EN_CUE)) {
    const between = masked.slice(cue.index + cue[0].length).trim();
    const words = between === '' ? 0 : between.split(/\s+/).length;
    if (words <= EN_WINDOW_WORDS) return true;
  }
  for (const cue of masked.matchAll(ZH_CUE)) {
    const between = masked.slice(cue.index + cue[0].length).replace(/\s+/g, '');
    if ([...between].length <= ZH_WINDOW_CHARS) return true;
  }
  return false;
}

/** Whether the clause affirms one of the terms: at least one occurrence that is not negated. */
export function affirms(clause: string, set: TermSet): boolean {
  for (const match of clause.matchAll(set.pattern)) {
    const before = clause.slice(0, match.index);
    const after = clause.slice(match.index + match[0].length);
    if (!negatedBefore(before) && !AFTER_NEGATIVE.test(after)) return true;
  }
  return false;
}

/** Whether the clause mentions one of the terms at all, negated or not. */
export function mentions(clause: string, set: TermSet): boolean {
  set.pattern.lastIndex = 0;
  return clause.search(set.pattern) >= 0;
}

/** Whether the clause contains the term only in negated form ("no penicillin allergy", "不怀孕"). */
export function deniesOnly(clause: string, set: TermSet): boolean {
  return mentions(clause, set) && !affirms(clause, set);
}
