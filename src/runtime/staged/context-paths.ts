/** Dotted paths into a staged agent's context (`sampleSize.total`, `endpoints.primary.name`, `perGroup.0`). */

export function getPath(root: unknown, path: string): unknown {
  let value: unknown = root;
  for (const key of path.split('.')) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/** Returns a copy of `root` with `value` at `path`, objects created on the way; `root` is not changed. */
export function setPath(root: Record<string, unknown>, path: string, value: unknown): Record<string, unknown> {
  const [head, ...rest] = path.split('.');
  const key = head!;
  if (!rest.length) return { ...root, [key]: value };
  const child = root[key];
  return { ...root, [key]: setPath(child && typeof child === 'object' && !Array.isArray(child) ? (child as Record<string, unknown>) : {}, rest.join('.'), value) };
}

/** Present: not undefined, null, empty text, an empty list or an empty object. "Not said" is not a value. */
export function isPresent(value: unknown): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value === 'string') return value.trim().length > 0;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === 'object') return Object.values(value).some(isPresent);
  return true;
}

/**
 * Adds what a message (or an edit) said to what the stage already holds: nested objects merge key by key, so
 * naming the primary endpoint's timepoint keeps its name; lists and values replace.
 */
export function mergeStageData(current: Record<string, unknown>, update: Record<string, unknown>): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...current };
  for (const [key, value] of Object.entries(update)) {
    const before = merged[key];
    merged[key] =
      value && typeof value === 'object' && !Array.isArray(value) && before && typeof before === 'object' && !Array.isArray(before)
        ? mergeStageData(before as Record<string, unknown>, value as Record<string, unknown>)
        : value;
  }
  return merged;
}

/** `perGroup` -> "per group": a context key as words, in what people read (summaries, notes). */
export function keyWords(key: string): string {
  return key.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase();
}
