/**
 * Shapes of the protocol's edit checks: the QC skill compiled from the eligibility criteria and the visit
 * schedule, the test records that exercise each rule, and the report of running them through the rule engine.
 *
 * The skill types restate the skill file format (src/trial/sop/skill-schema.ts) because an agent may not import
 * the trial area (.dependency-cruiser.cjs); the tests hold them to that schema and to the real loader.
 */

export type CheckSource = 'inclusion' | 'exclusion' | 'visit_window';

/** A hard rule as a skill file writes it. */
export interface SkillHardRule {
  id: string;
  /** The record field a violation is attached to: the cell a data query points at. */
  field: string;
  /** JSON Logic; the rule passes when it is truthy and raises a violation when it is not. */
  logic: unknown;
  message: string;
  severity: 'error' | 'warning' | 'info';
}

export interface SkillHardRuleNode {
  type: 'hard_rule';
  description: string;
  rules: SkillHardRule[];
  on_pass: string;
  on_fail: string;
}

export interface SkillHumanReviewNode {
  type: 'human_review';
  description: string;
  on_approve: string;
  on_reject: string;
}

/** A QC skill definition, key for key what a skill YAML file holds. */
export interface SkillDefinition {
  id: string;
  name: string;
  description: string;
  projects?: string[];
  start_node: string;
  nodes: Record<string, SkillHardRuleNode | SkillHumanReviewNode>;
}

/** An eligibility criterion's test, normalised: numbers as numbers, yes/no and true/false as their codes 1/0. */
export type CriterionTest =
  | { field: string; operator: '>=' | '<=' | '>' | '<'; value: number; unit?: string }
  | { field: string; operator: '==' | '!='; value: number | string; unit?: string }
  | { field: string; operator: 'between'; value: [number, number]; unit?: string }
  | { field: string; operator: 'in'; value: Array<number | string>; unit?: string };

/** A visit's window: its date must fall within day - before .. day + after of the anchor's date (day 0). */
export interface VisitWindowTest {
  /** Where the visit's date is in a record, `<event>.<visitDateField>`. */
  dateField: string;
  /** Where the baseline date is: the day-0 visit's `<event>.<visitDateField>`, else the top-level `visitDateField`. */
  anchorField: string;
  day: number;
  before: number;
  after: number;
}

/** One compiled rule, with what it was compiled from, so a reader can trace a finding back to the protocol. */
export type ProtocolCheck =
  | { ruleId: string; source: 'inclusion' | 'exclusion'; criterion: string; test: CriterionTest }
  | { ruleId: string; source: 'visit_window'; criterion: string; window: VisitWindowTest };

/** A criterion or visit that could not become a rule, and what to add or fix so it can. */
export interface SkippedCheck {
  source: CheckSource;
  text: string;
  reason: string;
}

export interface CompiledProtocolChecks {
  skill: SkillDefinition;
  /** The skill as a YAML file the skill loader reads (SKILLS_DIR). */
  yaml: string;
  rules: ProtocolCheck[];
  skipped: SkippedCheck[];
}

/** A record built to exercise one rule, and whether that rule must fire on it. */
export interface TestRecord {
  ruleId: string;
  label: string;
  expected: 'fires' | 'passes';
  /** The record as rules see it: baseline fields at the top level, visit fields under their event. */
  data: Record<string, unknown>;
}

export interface CheckVerification {
  ruleId: string;
  record: string;
  expected: 'fires' | 'passes';
  actual: 'fires' | 'passes';
  ok: boolean;
  /** The violation's message when the rule fired (an evaluation error says so here). */
  violation?: string;
}

export interface ProtocolChecksVerification {
  passed: boolean;
  results: CheckVerification[];
}
