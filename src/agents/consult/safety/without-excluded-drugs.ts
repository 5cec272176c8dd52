import { normaliseText } from '../risk/clinical-text.js';
import type { ExcludedDrug, PatientExclusions } from './patient-exclusions.js';

/** One excluded drug taken out of a text: which entry, the words that named it, and why. */
export interface RemovedDrug {
  drug: string;
  /** The name as it appeared (normalised: lower case, NFKC), e.g. "accutane", "异维a酸". */
  said: string;
  reason: string;
}

interface CheckedText {
  text: string;
  removed: RemovedDrug[];
}

const HAN = /\p{Script=Han}/u;

/**
 * Sentences end at 。！？；!?; and line breaks, and at a full stop followed by a space or the end (not the one in
 * "0.5 mg"). A semicolon counts, so "azelaic acid is fine; avoid isotretinoin" keeps its first half.
 */
export function splitSentences(text: string): string[] {
  const sentences: string[] = [];
  let start = 0;
  for (let at = 0; at < text.length; at += 1) {
    const char = text[at]!;
    const next = text[at + 1];
    const ends = /[。！？；;!?\n]/.test(char) || (char === '.' && (next === undefined || /\s/.test(next) || HAN.test(next)));
    if (ends) {
      sentences.push(text.slice(start, at + 1));
      start = at + 1;
    }
  }
  if (start < text.length) sentences.push(text.slice(start));
  return sentences;
}

/** The first name of `drug` in the (normalised) sentence. */
function firstMatch(normalised: string, drug: ExcludedDrug): string | undefined {
  drug.terms.pattern.lastIndex = 0;
  const match = drug.terms.pattern.exec(normalised);
  drug.terms.pattern.lastIndex = 0;
  return match?.[0];
}

/** The reasons in Chinese words a patient reads; the English reason stays in the trace. */
function chineseReason(reason: string): string {
  if (/pregnan/.test(reason)) return '孕期禁用';
  if (/breastfeed/.test(reason)) return '哺乳期禁用';
  if (/under \d/.test(reason)) return '不适合您的年龄';
  if (/allerg|cross-reactiv/.test(reason)) return '您对此类药物过敏';
  return '不适合您';
}

/** "avoid in pregnancy (highly teratogenic: ...)" -> "avoid in pregnancy": the patient reads the rule, the trace keeps the note. */
function shortReasons(reasons: readonly string[]): string {
  return [...new Set(reasons.map((reason) => reason.replace(/\s*\(.*$/s, '')))].join(', ');
}

/**
 * A plain warning in the sentence's language, in place of the sentence that named the drug. It does not name the
 * drug: a name the patient reads is a name the patient may act on, and the trace says which drug it was.
 */
function warning(sentence: string, reasons: readonly string[]): string {
  if (HAN.test(sentence)) return `⚠️ 回答中提到的一种药物不适合您（${[...new Set(reasons.map(chineseReason))].join('，')}），已删除。请勿自行用药，用药前请咨询医生或药师。`;
  return `⚠️ A medicine in this answer is not suitable for you (${shortReasons(reasons)}) and was taken out. Do not take it; ask a doctor or pharmacist before taking any medicine.`;
}

const OWN_WARNING = [/^⚠️ A medicine in this answer is not suitable for you \(([^()]*)\) and was taken out\.$/, /^⚠️ 回答中提到的一种药物不适合您（([^（）]*)），已删除。$/];

/**
 * A warning this check wrote (the dossier checks replies that were checked when sent): its reasons name an allergy
 * class ("penicillin allergy") and must not be taken for a drug. Only the exact warning, with this patient's
 * reasons in it, counts.
 */
function isOwnWarning(sentence: string, exclusions: PatientExclusions): boolean {
  const reasons = OWN_WARNING.map((pattern) => pattern.exec(sentence.trim())?.[1]).find((found) => found !== undefined);
  if (reasons === undefined) return false;
  const known = new Set(exclusions.drugs.flatMap((drug) => drug.reasons.flatMap((reason) => [shortReasons([reason]), chineseReason(reason)])));
  return reasons.split(/, |，/).every((reason) => known.has(reason));
}

/**
 * `text` with every sentence that names an excluded drug replaced by a plain warning. The whole sentence goes, not
 * only the name: "take oral isotretinoin 20 mg daily" without the name still tells a patient to take something,
 * and a negated mention ("you need not avoid isotretinoin") cannot be trusted to be a warning. The warning keeps
 * what a sentence that warned was for. The names match whole words in English (generic and brand) and anywhere in
 * Chinese.
 */
export function withoutExcludedDrugs(text: string, exclusions: PatientExclusions): CheckedText {
  if (exclusions.drugs.length === 0 || text === '') return { text, removed: [] };
  const removed: RemovedDrug[] = [];
  const warned = new Set<string>();
  const sentences = splitSentences(text).map((sentence) => {
    const normalised = normaliseText(sentence);
    const hits = exclusions.drugs.flatMap((drug) => {
      const said = firstMatch(normalised, drug);
      return said ? [{ drug, said }] : [];
    });
    if (hits.length === 0 || isOwnWarning(sentence, exclusions)) return sentence;
    for (const { drug, said } of hits) removed.push({ drug: drug.drug, said, reason: drug.reasons.join('; ') });
    const lead = /^\s*/.exec(sentence)![0];
    const trail = sentence.endsWith('\n') ? '\n' : '';
    const text = warning(sentence, [...new Set(hits.flatMap(({ drug }) => drug.reasons))]);
    // The same warning once per text: three sentences about isotretinoin read as one warning.
    if (warned.has(text)) return lead.includes('\n') ? lead : '';
    warned.add(text);
    return `${lead}${text}${trail}`;
  });
  return removed.length ? { text: sentences.join('').trim(), removed } : { text, removed };
}

/** Quick options that name an excluded drug are dropped: a tap must not ask for it. */
export function withoutExcludedOptions(options: readonly string[], exclusions: PatientExclusions): { options: string[]; removed: RemovedDrug[] } {
  const removed: RemovedDrug[] = [];
  const kept = options.filter((option) => {
    const checked = withoutExcludedDrugs(option, exclusions);
    removed.push(...checked.removed);
    return checked.removed.length === 0;
  });
  return { options: kept, removed };
}
