/**
 * Inlines local `$ref`s (`#/components/schemas/...`) so a reader sees the whole schema in one block.
 * A reference already being expanded higher up is left as `{ $ref }`, which keeps recursive schemas finite.
 */
export function resolveRefs(schema: unknown, root: unknown, expanding: ReadonlySet<string> = new Set()): unknown {
  if (Array.isArray(schema)) return schema.map((item) => resolveRefs(item, root, expanding));
  if (typeof schema !== 'object' || schema === null) return schema;

  const record = schema as Record<string, unknown>;
  const ref = record.$ref;
  if (typeof ref === 'string' && ref.startsWith('#/')) {
    const target = lookupPointer(root, ref);
    if (target === undefined || expanding.has(ref)) return schema;
    const { $ref: _ignored, ...siblings } = record;
    const resolved = resolveRefs(target, root, new Set([...expanding, ref]));
    return Object.keys(siblings).length > 0 && typeof resolved === 'object' && resolved !== null
      ? { ...(resolved as Record<string, unknown>), ...siblings }
      : resolved;
  }

  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) out[key] = resolveRefs(value, root, expanding);
  return out;
}

/** JSON Pointer lookup (RFC 6901): `~1` is `/`, `~0` is `~`. */
function lookupPointer(root: unknown, pointer: string): unknown {
  let node: unknown = root;
  for (const raw of pointer.slice(2).split('/')) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (typeof node !== 'object' || node === null || !(key in node)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}
