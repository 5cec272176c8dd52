/** Pretty-prints any value; strings are shown as-is so tool results that are plain text stay readable. */
export function formatJson(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return '';
  try {
    return JSON.stringify(value, null, 2);
  } catch {
    // Circular or BigInt values cannot come from JSON.parse, but a defensive fallback costs nothing.
    return String(value);
  }
}

export function JsonView({ value }: { value: unknown }) {
  return <pre className="json">{formatJson(value)}</pre>;
}

/** A collapsed JSON block: schemas and tool payloads can be long, and most readers only need the summary line. */
export function CollapsibleJson({ label, value, open }: { label: string; value: unknown; open?: boolean }) {
  return (
    <details className="collapsible" open={open}>
      <summary>{label}</summary>
      <JsonView value={value} />
    </details>
  );
}
