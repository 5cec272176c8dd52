import { affirms, deniesOnly, mentions, normaliseText, splitClauses, terms, type TermSet } from '../risk/clinical-text.js';
import type { PatientInfo } from '../types.js';
import type { Formulary } from './formulary.js';

/**
 * What rules drugs out for this patient, read from the model's `contraindications` strings (Chinese or English,
 * free text: "pregnant", "青霉素过敏", "age 5", "5岁") and from `patient_info`. Reading is deliberately narrow:
 * a string (or a clause of it) that names nothing known is reported back as not understood, never dropped, since a
 * contraindication nobody applied is exactly the error this tool exists to prevent. Negated statements ("not
 * pregnant", "无过敏史") are understood and change nothing. Planning a pregnancy counts as pregnancy, since the
 * drugs to avoid in pregnancy (retinoids, tetracyclines) are the ones to avoid before it too.
 */

const PREGNANCY = terms('pregnancy', [
  '怀孕', '孕妇', '妊娠', '孕期', '孕早期', '孕中期', '孕晚期', '备孕', '孕\\d+周', '有孕',
  'pregnan(?:t|cy)', 'expecting a baby', 'trying to conceive', 'planning (?:a )?pregnancy', '(?:first|second|third) trimester',
]);

const BREASTFEEDING = terms('breastfeeding', [
  '哺乳', '母乳', '喂奶', 'breast-?feed(?:ing|s)?', 'lactating', 'lactation', 'nursing (?:mother|a baby|an infant|my baby)', 'breast milk',
]);

const ALLERGY_CUE = terms('allergy', ['过敏', 'allerg(?:y|ies|ic)', 'hypersensitiv(?:e|ity)', 'anaphyla(?:xis|ctic)']);

const CHILD = terms('child', [
  '儿童', '小孩', '孩子', '婴儿', '幼儿', '宝宝', '新生儿', '小儿', 'child(?:ren)?', 'kids?', 'infants?', 'baby', 'toddler', 'p(?:a)?ediatric', 'newborn',
]);

const NOTHING = new Set(['none', 'no', 'nil', 'n/a', 'nkda', 'nka', '无', '没有', '否认']);

const AGE_PATTERNS: readonly { pattern: RegExp; toYears: (value: number) => number }[] = [
  { pattern: /(\d+(?:\.\d+)?)\s*(?:岁|周岁|-?years?(?:[\s-]*old)?|yrs?|y\/o|yo)(?![a-z])/u, toYears: (v) => v },
  { pattern: /(?:age|aged|年龄|年纪)\s*[:：]?\s*(\d+(?:\.\d+)?)/u, toYears: (v) => v },
  { pattern: /(\d+(?:\.\d+)?)\s*(?:个月|月龄|-?months?(?:[\s-]*old)?|mos?)(?![a-z])/u, toYears: (v) => v / 12 },
  { pattern: /(\d+(?:\.\d+)?)\s*(?:周|weeks?)\s*(?:大|old|of age)/u, toYears: (v) => v / 52 },
];

export interface PatientConstraints {
  pregnant: boolean;
  breastfeeding: boolean;
  /** Years; the youngest age stated when several were. */
  age?: number;
  /** Allergy class -> what was said ("青霉素过敏"). */
  allergyClasses: Map<string, string>;
  /** Drug name -> what was said: an allergy to the drug itself ("emollient"), class or not. */
  drugAllergies: Map<string, string>;
  /** Contraindications and allergies that were not understood, as warnings for the caller. */
  warnings: string[];
}

interface AllergyEntry {
  set: TermSet;
  classes: string[];
  drug?: string;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A word list as a term set; Latin words may take a plural "s". */
export function wordTerms(label: string, words: readonly string[]): TermSet {
  return terms(label, words.map((word) => {
    const escaped = escapeRegExp(normaliseText(word));
    return /[a-z]$/.test(escaped) ? `${escaped}(?:s)?` : escaped;
  }));
}

const indexes = new WeakMap<Formulary, AllergyEntry[]>();

/** Every way the formulary lets an allergy be named: class words, umbrella words, each drug's names. */
function allergyIndex(formulary: Formulary): AllergyEntry[] {
  let index = indexes.get(formulary);
  if (!index) {
    index = [
      ...Object.entries(formulary.allergyClasses).map(([id, words]) => ({ set: wordTerms(id, [id, ...words]), classes: [id] })),
      ...formulary.umbrellaAllergies.map((umbrella) => ({ set: wordTerms(umbrella.classes.join('+'), umbrella.terms), classes: umbrella.classes })),
      ...formulary.drugs.map((drug) => ({ set: wordTerms(drug.name, [drug.name, ...drug.aliases]), classes: drug.allergyClasses, drug: drug.name })),
    ];
    indexes.set(formulary, index);
  }
  return index;
}

function ageIn(clause: string): number | undefined {
  for (const { pattern, toYears } of AGE_PATTERNS) {
    const match = pattern.exec(clause);
    if (match) return toYears(Number(match[1]));
  }
  return undefined;
}

function emptyConstraints(): PatientConstraints {
  return { pregnant: false, breastfeeding: false, allergyClasses: new Map(), drugAllergies: new Map(), warnings: [] };
}

function setAge(into: PatientConstraints, age: number): void {
  into.age = into.age === undefined ? age : Math.min(into.age, age);
}

/** Adds the allergies a clause affirms; returns whether the clause named any drug or class at all. */
function readAllergies(clause: string, said: string, index: AllergyEntry[], into: PatientConstraints): boolean {
  let named = false;
  for (const entry of index) {
    if (!mentions(clause, entry.set)) continue;
    named = true;
    if (!affirms(clause, entry.set)) continue;
    for (const id of entry.classes) if (!into.allergyClasses.has(id)) into.allergyClasses.set(id, said);
    if (entry.drug && !into.drugAllergies.has(entry.drug)) into.drugAllergies.set(entry.drug, said);
  }
  return named;
}

function readContraindication(text: string, index: AllergyEntry[], into: PatientConstraints): void {
  const clauses = splitClauses(text);
  if (clauses.length === 0) return;
  for (const clause of clauses) {
    if (NOTHING.has(clause)) continue;
    let understood = false;
    if (mentions(clause, PREGNANCY)) {
      understood = true;
      if (affirms(clause, PREGNANCY)) into.pregnant = true;
    }
    if (mentions(clause, BREASTFEEDING)) {
      understood = true;
      if (affirms(clause, BREASTFEEDING)) into.breastfeeding = true;
    }
    const age = ageIn(clause);
    if (age !== undefined) {
      understood = true;
      setAge(into, age);
    }
    if (readAllergies(clause, text.trim(), index, into)) understood = true;
    else if (deniesOnly(clause, ALLERGY_CUE)) understood = true;
    if (understood) continue;
    if (mentions(clause, CHILD)) {
      into.warnings.push(`Contraindication not understood: "${clause}" gives no age. Give the age in years (e.g. "age 5", "5岁") so age limits are applied; until then check each drug's age limit yourself.`);
    } else if (affirms(clause, ALLERGY_CUE)) {
      into.warnings.push(`Contraindication not understood: "${clause}" names no drug or drug class in the formulary, so nothing was excluded for it; check it yourself against each drug below.`);
    } else {
      into.warnings.push(`Contraindication not understood: "${clause}", check it yourself against each drug below.`);
    }
  }
}

function readPatientAllergy(text: string, index: AllergyEntry[], into: PatientConstraints): void {
  const clause = normaliseText(text).trim();
  if (clause === '' || NOTHING.has(clause) || deniesOnly(clause, ALLERGY_CUE)) return;
  if (!readAllergies(clause, text.trim(), index, into)) {
    into.warnings.push(`Allergy "${text.trim()}" matches no drug or drug class in the formulary, so nothing was excluded for it; check it yourself against each drug below.`);
  }
}

export function readConstraints(formulary: Formulary, contraindications: readonly string[], patientInfo: PatientInfo = {}): PatientConstraints {
  const index = allergyIndex(formulary);
  const constraints = emptyConstraints();
  for (const text of contraindications) readContraindication(text, index, constraints);
  if (patientInfo.pregnant === true) constraints.pregnant = true;
  if (patientInfo.breastfeeding === true) constraints.breastfeeding = true;
  if (typeof patientInfo.age === 'number' && Number.isFinite(patientInfo.age) && patientInfo.age >= 0) setAge(constraints, patientInfo.age);
  for (const allergy of patientInfo.allergies ?? []) {
    if (typeof allergy === 'string') readPatientAllergy(allergy, index, constraints);
  }
  return constraints;
}

/** What the patient said about themselves, read from their own words. */
interface PatientWords {
  pregnant: boolean;
  breastfeeding: boolean;
  /** Each clause that affirms an allergy to a drug or class the formulary knows, and what it names. */
  allergies: Array<{ said: string; names: string[] }>;
  /** A clause denied having allergies ("no allergies", "没有过敏史"). */
  deniesAllergies: boolean;
}

/**
 * The patient's own messages, read the way the risk check reads symptoms (clinical-text.ts): clause by clause,
 * negation respected. "I am allergic to penicillin" or "青霉素过敏" is an allergy whether or not the model ever
 * recorded it; "I am pregnant" is a pregnancy. Reading a relative's pregnancy as the patient's errs on the side
 * that withholds a drug, which is the side a triage must err on. Age is left to the record: "3 years" in a
 * patient's words is as often a duration as an age.
 */
export function readPatientWords(formulary: Formulary, texts: readonly string[]): PatientWords {
  const index = allergyIndex(formulary);
  const words: PatientWords = { pregnant: false, breastfeeding: false, allergies: [], deniesAllergies: false };
  for (const text of texts) {
    for (const clause of splitClauses(text)) {
      if (affirms(clause, PREGNANCY)) words.pregnant = true;
      if (affirms(clause, BREASTFEEDING)) words.breastfeeding = true;
      if (!mentions(clause, ALLERGY_CUE)) continue;
      const found = emptyConstraints();
      const named = readAllergies(clause, clause, index, found);
      if (!affirms(clause, ALLERGY_CUE)) {
        // "Not allergic to penicillin" denies one allergy, not all of them.
        if (!named) words.deniesAllergies = true;
        continue;
      }
      const names = [...new Set([...found.allergyClasses.keys(), ...found.drugAllergies.keys()])];
      if (names.length) words.allergies.push({ said: clause, names });
    }
  }
  return words;
}
