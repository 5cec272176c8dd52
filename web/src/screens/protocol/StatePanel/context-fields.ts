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
}

/**
 * What the panel lists for a field: every editable entry (blank ones too, so the researcher sees what is still
 * missing), then any other keys the field holds, in the order the server sent them.
 */
export function displayRows(field: string, data: Record<string, unknown>): DisplayRow[] {
  const entries = editableEntries(field);
  const editedHeads = new Set(entries.map((entry) => entry.path.split('.')[0]));
  const rows = entries.map((entry) => ({ path: entry.path, text: displayValue(valueAt(data, entry.path)) }));
  for (const [key, value] of Object.entries(data)) {
    const text = displayValue(value);
    if (!text) continue;
    if (!editedHeads.has(key)) rows.push({ path: key, text });
    else if (isRecord(value)) {
      // Sub-keys of an edited object that the editor has no input for (endpoints.primary.unit) still show.
      for (const [child, childValue] of Object.entries(value)) {
        const path = `${key}.${child}`;
        if (!entries.some((entry) => entry.path === path) && displayValue(childValue)) rows.push({ path, text: displayValue(childValue) });
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
