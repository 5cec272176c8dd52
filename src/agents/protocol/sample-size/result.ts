/** What every design answers: per-group sizes after dropout, the formula used, and the assumptions to write into a protocol. */
export interface SampleSizeResult {
  /** [n1, n2]; one_proportion answers [n, 0]. */
  perGroup: [number, number];
  total: number;
  /** time_to_event only: events needed. */
  events?: number;
  method: string;
  assumptions: string[];
}

// Floating error in a closed form (64.0000000001) must not cost a patient.
export const roundUp = (n: number): number => Math.ceil(n - 1e-9);

/** n1 from its unrounded value, n2 = ratio * n1, each inflated by n / (1 - dropout) and rounded up. */
export function groups(n1Raw: number, ratio: number, dropout: number): { perGroup: [number, number]; total: number; note: string } {
  const inflate = (n: number) => roundUp(n / (1 - dropout));
  const before: [number, number] = [roundUp(n1Raw), roundUp(n1Raw * ratio)];
  const perGroup: [number, number] = [inflate(before[0]), inflate(before[1])];
  const note = dropout > 0 ? `${before[0]} + ${before[1]} evaluable, inflated for ${dropout * 100}% dropout as n / (1 - dropout), rounded up` : 'no dropout inflation';
  return { perGroup, total: perGroup[0] + perGroup[1], note };
}

/**
 * "allocation ratio 1:2 (group 1 : group 2)": the ratio as a protocol writes it. The calculator's `ratio` is
 * n2 / n1, a name for the formula, not for the reader of the protocol.
 */
export function allocationRatio(ratio: number): string {
  return `allocation ratio 1:${ratio} (group 1 : group 2)`;
}
