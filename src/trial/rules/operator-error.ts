/**
 * Thrown by a clinical operator when its input cannot be evaluated (a missing or invalid date, a bad pattern
 * from the data). The rule runner turns it into an error violation, so the message names the operator, the
 * argument and what was found: it is what a data manager reads.
 */
export class OperatorError extends Error {
  constructor(
    readonly operator: string,
    reason: string,
  ) {
    super(`${operator}: ${reason}`);
    this.name = 'OperatorError';
  }
}

/** Shows a value in an error message: JSON, cut short so a large field cannot flood the violation. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  const text = value instanceof Date ? value.toISOString() : JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
