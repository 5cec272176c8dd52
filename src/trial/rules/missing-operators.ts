/**
 * `missing` and `missing_some` as the JSON Logic specification defines them: a key is missing when it is
 * absent, null or an empty string (the reference interpreter, json-logic-js, does exactly this).
 * json-logic-engine 5 counts only absent keys, so a blank CRF cell (stored as null) would pass a
 * required-field rule: the worst kind of silent error for QC. These replace its versions.
 */
export function specMissing(args: unknown, context: unknown): unknown[] {
  const keys = Array.isArray(args) && args.length === 1 && Array.isArray(args[0]) ? (args[0] as unknown[]) : Array.isArray(args) ? args : [args];
  return missingOfKeys(keys)(context);
}

/**
 * The same check for a key list known when the rule is compiled (`{"missing": ["age", "sex"]}`, the usual
 * required-field rule): the keys are read once, so each evaluation only looks values up.
 */
export function missingOfKeys(keys: readonly unknown[]): (context: unknown) => unknown[] {
  // A plain field name (no dot) is read directly; only a path is split, and only once, here.
  const plain = keys.map((key) => (typeof key === 'string' && key !== '' && !key.includes('.') ? key : undefined));
  return (context) => {
    const missing: unknown[] = [];
    for (let i = 0; i < keys.length; i++) {
      const name = plain[i];
      const value = name === undefined ? lookup(context, keys[i]) : context === null || context === undefined ? undefined : (context as Record<string, unknown>)[name];
      if (value === undefined || value === null || value === '') missing.push(keys[i]);
    }
    return missing;
  };
}

export function specMissingSome(args: unknown, context: unknown): unknown[] {
  const [needCount, keys] = Array.isArray(args) ? args : [];
  const list = Array.isArray(keys) ? keys : [];
  const missing = specMissing([list], context);
  return list.length - missing.length >= Number(needCount) ? [] : missing;
}

function lookup(context: unknown, key: unknown): unknown {
  if (key === null || key === undefined || key === '') return context;
  if (typeof key === 'string' && !key.includes('.')) return context === null || context === undefined ? undefined : (context as Record<string, unknown>)[key];
  let value: unknown = context;
  for (const part of String(key).split('.')) {
    if (value === null || value === undefined) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}
