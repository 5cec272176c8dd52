/**
 * How the state panel shows and edits each context field (the shapes of src/agents/protocol/context.ts). An
 * editable entry is one input; `primary.name` edits inside an object. Everything else the field holds (criteria,
 * visits, per-group numbers) is shown read-only, since a one-line input cannot edit a list.
 */
export type ValueKind = 'text' | 'longText' | 'number';

export interface EditableEntry {
  /** A key of the field, or `parent.child` one level down. */
  path: string;
  kind: ValueKind;
}

export const EDITABLE_ENTRIES: Readonly<Record<string, readonly EditableEntry[]>> = {
  scientificQuestion: [
    { path: 'question', kind: 'longText' },
    { path: 'background', kind: 'longText' },
    { path: 'rationale', kind: 'longText' },
    { path: 'objectives.benefits', kind: 'longText' },
    { path: 'objectives.harms', kind: 'longText' },
  ],
  pico: [
    { path: 'population', kind: 'text' },
    { path: 'intervention', kind: 'text' },
    { path: 'comparison', kind: 'text' },
    { path: 'outcome', kind: 'text' },
  ],
  studyDesign: [
    { path: 'type', kind: 'text' },
    { path: 'allocation', kind: 'text' },
    { path: 'blinding', kind: 'text' },
    { path: 'randomization', kind: 'text' },
    { path: 'sequenceGeneration', kind: 'text' },
    { path: 'allocationConcealment', kind: 'text' },
    { path: 'duration', kind: 'text' },
  ],
  sampleSize: [
    { path: 'method', kind: 'text' },
    { path: 'total', kind: 'number' },
    { path: 'alpha', kind: 'number' },
    { path: 'power', kind: 'number' },
  ],
  endpoints: [
    { path: 'primary.name', kind: 'text' },
    { path: 'primary.measure', kind: 'text' },
    { path: 'primary.timepoint', kind: 'text' },
  ],
};

export function editableEntries(field: string): readonly EditableEntry[] {
  return EDITABLE_ENTRIES[field] ?? [];
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

export function valueAt(data: Record<string, unknown>, path: string): unknown {
  const [head, child] = path.split('.') as [string, string | undefined];
  const value = data[head];
  if (child === undefined) return value;
  return isRecord(value) ? value[child] : undefined;
}

/** A value as one line of the panel: blank for nothing, lists joined, objects as their values. */
export function displayValue(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return value.map(displayValue).filter(Boolean).join('; ');
  if (isRecord(value)) {
    if (typeof value.text === 'string') return value.text;
    if (typeof value.name === 'string') return [value.name, ...Object.entries(value).filter(([key]) => key !== 'name').map(([key, v]) => `${key}: ${displayValue(v)}`)].join(', ');
    return Object.entries(value).map(([key, v]) => `${key}: ${displayValue(v)}`).join(', ');
  }
  return String(value);
}

export interface DisplayRow {
  /** The path shown; its label comes from i18n when one exists. */
  path: string;
  text: string;
  /** A list's entries, one per line (criteria, assumptions, arms), when the value is a list. */
  items?: string[];
}

export type Arm = 'intervention' | 'comparison' | 'single';

export interface DisplayOptions {
  /** The protocol's PICO: the arms of the sample size are named after its intervention and comparison. */
  pico?: Record<string, unknown>;
  /** The arm's name in the reader's language. */
  armLabel?(arm: Arm): string;
}

const ENGLISH_ARMS: Record<Arm, string> = { intervention: 'Intervention', comparison: 'Comparison', single: 'Single arm' };

/**
 * The calculator's groups as the protocol's arms: group 1 is the intervention, group 2 the comparison (its
 * differences are group 1 minus group 2), and [n, 0] is a single arm.
 */
function armRows(perGroup: unknown, options: DisplayOptions): string[] {
  const sizes = Array.isArray(perGroup) ? perGroup : [perGroup];
  const label = (arm: Arm) => options.armLabel?.(arm) ?? ENGLISH_ARMS[arm];
  if (sizes.length === 2 && Number(sizes[1]) === 0) return [`${label('single')}: ${displayValue(sizes[0])}`];
  const named = (arm: Arm) => {
    const what = displayValue(options.pico?.[arm]);
    return what ? `${label(arm)} (${what})` : label(arm);
  };
  const arms = [named('intervention'), named('comparison')];
  return sizes.map((n, index) => `${arms[index] ?? `${index + 1}`}: ${displayValue(n)}`);
}

/** A row for one value: a list gets its entries one per line. */
function rowOf(path: string, value: unknown): DisplayRow {
  if (!Array.isArray(value)) return { path, text: displayValue(value) };
  const items = value.map(displayValue).filter(Boolean);
  return { path, text: items.join('; '), items };
}

/** Keys a panel never shows: the calculator's inputs only pre-fill its card; the method and assumptions say them in words. */
const HIDDEN_KEYS: Readonly<Record<string, readonly string[]>> = { sampleSize: ['inputs'] };

/** Rows of a key the editor has no input for: criteria one per line, arms named, lists as lists. */
function otherRows(field: string, key: string, value: unknown, options: DisplayOptions): DisplayRow[] {
  if (field === 'sampleSize' && key === 'perGroup') {
    const items = armRows(value, options);
    return [{ path: key, text: items.join('; '), items }];
  }
  if (field === 'pico' && key === 'eligibility' && isRecord(value)) {
    return Object.entries(value).map(([list, criteria]) => rowOf(`${key}.${list}`, criteria)).filter((row) => row.text);
  }
  return [rowOf(key, value)];
}

/**
 * What the panel lists for a field: every editable entry (blank ones too, so the researcher sees what is still
 * missing), then any other keys the field holds, in the order the server sent them.
 */
export function displayRows(field: string, data: Record<string, unknown>, options: DisplayOptions = {}): DisplayRow[] {
  const entries = editableEntries(field);
  const editedHeads = new Set(entries.map((entry) => entry.path.split('.')[0]));
  const hidden = HIDDEN_KEYS[field] ?? [];
  const rows: DisplayRow[] = entries.map((entry) => ({ path: entry.path, text: displayValue(valueAt(data, entry.path)) }));
  for (const [key, value] of Object.entries(data)) {
    const text = displayValue(value);
    if (!text || hidden.includes(key)) continue;
    if (!editedHeads.has(key)) rows.push(...otherRows(field, key, value, options));
    else if (isRecord(value)) {
      // Sub-keys of an edited object that the editor has no input for (endpoints.primary.unit) still show.
      for (const [child, childValue] of Object.entries(value)) {
        const path = `${key}.${child}`;
        if (!entries.some((entry) => entry.path === path) && displayValue(childValue)) rows.push(rowOf(path, childValue));
      }
    }
  }
  return rows;
}

/** The editor's inputs, filled with what the field holds now. */
export function draftOf(field: string, data: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(editableEntries(field).map((entry) => [entry.path, displayValue(valueAt(data, entry.path))]));
}

export interface PatchBuild {
  /** Only the keys the researcher changed; an object edited one level down is sent whole, its other keys kept. */
  value: Record<string, unknown>;
  /** Inputs that cannot be sent as they are: path -> the number they should be. */
  invalid: string[];
}

/**
 * The PATCH body's `value` for what the researcher typed. The server adds the keys it is sent to the field, so
 * unchanged keys stay out of it; a blank input is left out too, since "not answered" is the absence of the key.
 */
export function buildPatch(field: string, data: Record<string, unknown>, draft: Record<string, string>): PatchBuild {
  const value: Record<string, unknown> = {};
  const invalid: string[] = [];
  for (const entry of editableEntries(field)) {
    const typed = (draft[entry.path] ?? '').trim();
    if (typed === '' || typed === displayValue(valueAt(data, entry.path))) continue;
    let next: unknown = typed;
    if (entry.kind === 'number') {
      const number = Number(typed);
      if (!Number.isFinite(number)) {
        invalid.push(entry.path);
        continue;
      }
      next = number;
    }
    const [head, child] = entry.path.split('.') as [string, string | undefined];
    if (child === undefined) value[head] = next;
    else {
      const current = isRecord(value[head]) ? value[head] : isRecord(data[head]) ? data[head] : {};
      value[head] = { ...current, [child]: next };
    }
  }
  return { value, invalid };
}
