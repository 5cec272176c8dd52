/** Public shapes of the hard-rule engine (seed 000 section 2: HardRuleEngine). */
export type Severity = 'error' | 'warning' | 'info';

/** One hard rule: it passes when `logic` (JSON Logic) evaluates truthy against a record. */
export interface HardRule {
  /** Stable id for queries and audit; defaults to `${field}#${index}`. */
  id?: string;
  /** The record field a violation is attached to (and whose value it reports). */
  field: string;
  logic: unknown;
  /** What the site should fix, shown when the rule fails. */
  message: string;
  /** Defaults to 'error'. */
  severity?: Severity;
}

export interface Violation {
  ruleId: string;
  field: string;
  message: string;
  severity: Severity;
  /** `data[field]`, null when absent. */
  value: unknown;
}

export interface CompiledRules {
  readonly rules: ReadonlyArray<HardRule & { id: string }>;
  /** Evaluates every rule against one record; an empty array means the record passes. Never throws. */
  run(data: Record<string, unknown>): Violation[];
  /**
   * The same violations as `run`, letting the event loop run every few milliseconds: what a server uses, so
   * rules working through hostile data cannot stall its other requests. Never rejects.
   */
  runInSlices(data: Record<string, unknown>): Promise<Violation[]>;
}
