import { z } from 'zod';
import { withoutIdentifiers } from './safety/identifiers.js';
import type { MedicalContext, PatientInfo } from './types.js';

/**
 * The model's `medical_context_update` read at the definition's edge, into the one shape the consult reads
 * (types.ts MedicalContext). The model writes what it likes: `location: "left forearm"`, `duration: 3`,
 * `symptoms: [{"name": "rash"}]`, `age: "34岁"`, `pregnant: "yes"`. Each field is coerced to its type, and what
 * cannot be read is left out rather than refused: a turn must never fail over the shape of the model's notes, and
 * the safety check reads the patient's own words every turn anyway. Keys the consult does not know pass through.
 * Identifiers do not: the context goes back to the model every round and is stored, so names, phone numbers, ID
 * numbers, addresses and e-mail are dropped under any key at any depth (`patient_info.name`,
 * `additional_information.home_phone`) and replaced in any text, before anything is coerced (safety/identifiers.ts).
 */

/** Keys that name the text of an item the model wrote as an object ({"name": "rash", "severity": "mild"}). */
const TEXT_KEYS = ['name', 'symptom', 'text', 'description', 'value', 'label', 'condition', 'finding', 'location', 'site'] as const;
/** Lists stay short: the context goes back to the model every round. */
const MAX_ITEMS = 50;
const MAX_TEXT = 500;

function textOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value.trim().slice(0, MAX_TEXT) || undefined;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return textsOf(value).join(', ') || undefined;
  if (value && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    const key = TEXT_KEYS.find((k) => textOf(record[k]) !== undefined);
    const main = key ? textOf(record[key]) : undefined;
    // The other plain fields qualify the main text ("rash (severity: mild)") instead of being lost.
    const rest = Object.entries(record)
      .filter(([k, v]) => k !== key && (typeof v === 'string' || typeof v === 'number') && String(v).trim())
      .map(([k, v]) => `${k}: ${String(v).trim()}`);
    if (main) return (rest.length ? `${main} (${rest.join(', ')})` : main).slice(0, MAX_TEXT);
    return rest.join(', ').slice(0, MAX_TEXT) || undefined;
  }
  return undefined;
}

function textsOf(value: unknown): string[] {
  const items = Array.isArray(value) ? value.flat(2) : [value];
  return items.map(textOf).filter((text): text is string => text !== undefined).slice(0, MAX_ITEMS);
}

/** Allergies written as one sentence ("penicillin, sulfa") are several names: each must match the formulary. */
const ALLERGY_SEPARATOR = /[,;，；、\n]|\band\b|和|及/u;
function allergiesOf(value: unknown): string[] {
  return textsOf(value).flatMap((text) => text.split(ALLERGY_SEPARATOR)).map((name) => name.trim()).filter(Boolean).slice(0, MAX_ITEMS);
}

/** Years: 34, "34", "34 years", "34岁"; months as a fraction ("6 months" = 0.5). Anything else is unknown. */
function ageOf(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 && value <= 130 ? value : undefined;
  const text = textOf(value)?.normalize('NFKC').toLowerCase();
  const match = text ? /(\d+(?:\.\d+)?)\s*(months?|个月|月)?/u.exec(text) : null;
  if (!match) return undefined;
  const years = match[2] ? Number(match[1]) / 12 : Number(match[1]);
  return years <= 130 ? Math.round(years * 100) / 100 : undefined;
}

const YES = new Set(['true', 'yes', 'y', '1', 'pregnant', 'breastfeeding', '是', '是的', '有', '怀孕', '哺乳']);
const NO = new Set(['false', 'no', 'n', '0', 'not', 'none', '否', '不是', '没有', '无']);
/**
 * A yes/no the model may write as text. Uncertainty ("possibly", "可能") counts as yes: for pregnancy and
 * breastfeeding the safe reading is the one that keeps a contraindicated drug out, as the risk reading counts
 * "not sure if fever" as fever.
 */
function flagOf(value: unknown): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number') return value !== 0;
  const text = textOf(value)?.normalize('NFKC').trim().toLowerCase();
  if (!text) return undefined;
  if (YES.has(text)) return true;
  if (NO.has(text)) return false;
  if (/possibl|maybe|perhaps|unsure|not sure|might|likely|可能|也许|不确定/u.test(text)) return true;
  return undefined;
}

const FEMALE = new Set(['female', 'f', 'woman', 'girl', '女', '女性', '女士']);
const MALE = new Set(['male', 'm', 'man', 'boy', '男', '男性', '先生']);
function sexOf(value: unknown): PatientInfo['sex'] {
  const key = textOf(value)?.normalize('NFKC').toLowerCase() ?? '';
  if (FEMALE.has(key)) return 'female';
  if (MALE.has(key)) return 'male';
  return key ? 'other' : undefined;
}

/** Each field: coerced by its reader, then checked; a value that still does not fit is dropped, never thrown. */
const field = <T extends z.ZodType>(read: (value: unknown) => unknown, schema: T) => z.preprocess(read, schema.optional()).catch(undefined);
const nonEmpty = <T>(items: T[]): T[] | undefined => (items.length ? items : undefined);

const textList = field((v) => (v === undefined || v === null ? undefined : nonEmpty(textsOf(v))), z.array(z.string().min(1)));
const text = field((v) => (v === undefined || v === null ? undefined : textOf(v)), z.string().min(1));

const patientInfoShape = z.looseObject({
  age: field(ageOf, z.number().min(0).max(130)),
  sex: field(sexOf, z.enum(['female', 'male', 'other'])),
  pregnant: field(flagOf, z.boolean()),
  breastfeeding: field(flagOf, z.boolean()),
  allergies: field((v) => (v === undefined || v === null ? undefined : allergiesOf(v)), z.array(z.string().min(1))),
});

const medicalContextFields = z.looseObject({
  symptoms: textList,
  location: textList,
  duration: text,
  triggers: textList,
  // Not an object (a sentence about the patient): nothing in it can be read as a field, so it is kept as a note.
  patient_info: z.preprocess((v) => (v === undefined || v === null ? undefined : v && typeof v === 'object' && !Array.isArray(v) ? v : { note: textOf(v) }), patientInfoShape.optional()).catch(undefined),
  missing_info: textList,
  suspected_conditions: textList,
  image_findings: textList,
});

const medicalContextShape = z.preprocess((value) => withoutIdentifiers(value), medicalContextFields);

/** Drops the keys a coercion left undefined, so a merge does not overwrite what is known with nothing. */
function withoutUndefined<T extends Record<string, unknown>>(record: T): T {
  return Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined).map(([k, v]) => [k, v && typeof v === 'object' && !Array.isArray(v) ? withoutUndefined(v as Record<string, unknown>) : v])) as T;
}

/** A context (or an update to one) in the consult's shape, whatever the model wrote; never throws. */
export function normalizeMedicalContext(value: unknown): MedicalContext {
  const parsed = medicalContextShape.safeParse(value && typeof value === 'object' && !Array.isArray(value) ? value : {});
  return parsed.success ? (withoutUndefined(parsed.data) as MedicalContext) : {};
}
