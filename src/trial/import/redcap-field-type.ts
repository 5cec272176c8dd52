import type { FieldType } from '../../core/db/schema/trial.js';
import { quote } from './problems.js';

/**
 * REDCap keeps the kind of a text field in its validation type ("integer", "date_ymd"); we keep it in the
 * field type, so QC code asks one question. Names from older REDCap versions ("int", "float", "date") are
 * accepted because dictionaries of long-running trials still carry them.
 */
export function fieldTypeOf(redcapType: string, validation: string): FieldType | 'skip' | undefined {
  switch (redcapType) {
    case 'text':
      return textFieldType(validation);
    case 'notes':
    case 'calc':
    case 'dropdown':
    case 'radio':
    case 'checkbox':
    case 'yesno':
    case 'truefalse':
      return redcapType;
    // A slider stores a whole number from 0 to 100.
    case 'slider':
      return 'integer';
    // Uploads export as a file name, kept typed as a file so no one takes it for text to check or show as content.
    case 'file':
      return 'file';
    // SQL fields export their chosen value as text.
    case 'sql':
      return 'text';
    // Descriptive fields hold display text only and have no column in any export.
    case 'descriptive':
      return 'skip';
    default:
      return undefined;
  }
}

function textFieldType(validation: string): FieldType {
  if (validation === 'integer' || validation === 'int') return 'integer';
  if (validation === 'float' || validation.startsWith('number')) return 'number';
  if (validation === 'date' || validation.startsWith('date_')) return 'date';
  if (validation.startsWith('datetime_')) return 'datetime';
  // email, phone, time, zipcode...: kept as text; checking their format is QC's job, not the importer's.
  return 'text';
}

export const REDCAP_FIELD_TYPES = ['text', 'notes', 'calc', 'dropdown', 'radio', 'checkbox', 'yesno', 'truefalse', 'slider', 'file', 'sql', 'descriptive'] as const;

/** REDCap's fixed codes for its two built-in choice types. */
export const IMPLICIT_CHOICES: Partial<Record<FieldType, Array<{ code: string; label: string }>>> = {
  yesno: [
    { code: '1', label: 'Yes' },
    { code: '0', label: 'No' },
  ],
  truefalse: [
    { code: '1', label: 'True' },
    { code: '0', label: 'False' },
  ],
};

/**
 * Parses REDCap's choice list "1, Male | 2, Female". Only the first comma separates code from label, since
 * labels often contain commas ("3, Other, specify"). Returns the problems as text for the caller to place.
 */
export function parseChoices(text: string): { choices: Array<{ code: string; label: string }>; problems: string[] } {
  const choices: Array<{ code: string; label: string }> = [];
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const item of text.split('|')) {
    const trimmed = item.trim();
    if (!trimmed) continue;
    const comma = trimmed.indexOf(',');
    if (comma <= 0) {
      problems.push(`choice ${quote(trimmed)} has no code; write it as "code, label", e.g. "1, Male"`);
      continue;
    }
    const code = trimmed.slice(0, comma).trim();
    const label = trimmed.slice(comma + 1).trim();
    if (seen.has(code)) problems.push(`choice code ${quote(code)} appears twice; give each choice its own code`);
    seen.add(code);
    choices.push({ code, label });
  }
  if (choices.length === 0 && problems.length === 0) problems.push('the field has no choices; list them as "1, Male | 2, Female"');
  return { choices, problems };
}
