/**
 * JSON with object keys sorted at every depth. jsonb returns keys in its own order (shorter keys first),
 * so two equal values read back from the database and parsed from a file only compare equal this way.
 */
export function stableJson(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) =>
    inner && typeof inner === 'object' && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : inner,
  );
}
