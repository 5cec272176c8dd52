/**
 * The medical context and the dossier are open JSON (the model keeps the context; the dossier has its own sections),
 * so the console reads them defensively and shows every value as text a patient or a clinician can read: lists
 * joined, objects as their values, nothing dropped because it had an unexpected shape.
 */

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** `red_flags` -> "Red flags", `patientInfo` -> "Patient info"; keys in other scripts as written. */
export function humanizeKey(key: string): string {
  const spaced = key.replace(/[_-]+/g, ' ').replace(/([a-z0-9])([A-Z])/g, '$1 $2').trim().toLowerCase();
  return spaced.replace(/^./, (first) => first.toUpperCase());
}

/** One value as one line: blank for nothing, lists joined by "; ", named things first. */
export function readableText(value: unknown, words: { yes: string; no: string } = { yes: 'yes', no: 'no' }): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'boolean') return value ? words.yes : words.no;
  if (typeof value === 'string') return value.trim();
  if (typeof value === 'number') return String(value);
  if (Array.isArray(value)) return value.map((item) => readableText(item, words)).filter(Boolean).join('; ');
  if (isRecord(value)) {
    // A red flag reads as its description, a transcript line as "role: content", a medicine by its name first.
    if (typeof value.description === 'string') return value.description;
    if (typeof value.role === 'string' && typeof value.content === 'string') return `${value.role}: ${value.content}`;
    const rest = Object.entries(value).filter(([key]) => key !== 'name');
    const details = rest.map(([, inner]) => readableText(inner, words)).filter(Boolean).join(', ');
    if (typeof value.name === 'string') return details ? `${value.name} (${details})` : value.name;
    return Object.entries(value)
      .map(([key, inner]) => [humanizeKey(key), readableText(inner, words)] as const)
      .filter(([, text]) => text)
      .map(([label, text]) => `${label}: ${text}`)
      .join('; ');
  }
  return String(value);
}

export interface ReadableRow {
  /** The key, `parent.child` one level down; its label comes from i18n when one exists. */
  path: string;
  key: string;
  value: unknown;
}

/** The context keys the consult's instructions name, in the order a clinician takes a history. */
export const CONTEXT_ORDER = ['symptoms', 'location', 'duration', 'triggers', 'patient_info', 'suspected_conditions', 'image_findings', 'missing_info'] as const;

/**
 * The medical context as rows: the known keys first and always (a blank one shows what is still unknown), then
 * whatever else the model recorded. Patient info is opened one level (age, sex, allergies each a row).
 */
export function contextRows(context: Record<string, unknown>): ReadableRow[] {
  const keys = [...CONTEXT_ORDER, ...Object.keys(context).filter((key) => !(CONTEXT_ORDER as readonly string[]).includes(key))];
  return keys.flatMap((key): ReadableRow[] => {
    const value = context[key];
    if (key === 'patient_info' && isRecord(value) && Object.keys(value).length > 0) {
      return Object.entries(value).map(([inner, innerValue]) => ({ path: `${key}.${inner}`, key: inner, value: innerValue }));
    }
    return [{ path: key, key, value }];
  });
}

export interface DossierSection {
  key: string;
  /** A section that is one value (the chief complaint). */
  text?: string;
  /** A section of named values (history, patient, risk...). */
  rows?: Array<{ key: string; text: string }>;
  /** A section that is a list (the transcript). */
  items?: string[];
}

/** Shown above the sections and below them, rather than as sections of their own. */
const FRAME_KEYS = new Set(['title', 'created_at', 'disclaimer']);

/** The dossier's sections in the server's order, each as text, rows or a list. */
export function dossierSections(dossier: Record<string, unknown>, words?: { yes: string; no: string }): DossierSection[] {
  return Object.entries(dossier)
    .filter(([key]) => !FRAME_KEYS.has(key))
    .map(([key, value]): DossierSection => {
      if (Array.isArray(value)) return { key, items: value.map((item) => readableText(item, words)).filter(Boolean) };
      if (isRecord(value)) return { key, rows: Object.entries(value).map(([inner, innerValue]) => ({ key: inner, text: readableText(innerValue, words) })) };
      return { key, text: readableText(value, words) };
    });
}
