import { withoutIdentifierValues } from '../identifiers.js';
import type { Severity } from '../rules/index.js';
import type { Skill } from '../sop/load-skills.js';
import { eventOf, type RecordContext } from '../sop/record-context.js';

/** A finding as a QC run would raise it on the record, before anything is written. */
export interface SkillFinding {
  recordId: string;
  eventName: string;
  node: string;
  ruleId: string;
  field: string;
  message: string;
  severity: Severity;
  value: unknown;
}

/** A node a tool did not evaluate, and why. */
export interface SkippedNode {
  node: string;
  reason: string;
}

/**
 * The hard rules of every hard_rule node of `skill` on one record, as the SOP engine evaluates them (checkHardRules:
 * the compiled rules in event-loop slices, each violation on the event its field names). Every hard_rule node is
 * evaluated, whichever path a run would take, so a rule behind a review node is tried too.
 */
export async function hardRuleFindings(skill: Skill, record: RecordContext): Promise<SkillFinding[]> {
  const findings: SkillFinding[] = [];
  for (const [node, compiled] of Object.entries(skill.compiled)) {
    for (const violation of await compiled.runInSlices(record.data)) {
      findings.push({ recordId: record.recordId, eventName: eventOf(record, violation.field), node, ...violation, message: withoutIdentifierValues(violation.message, record.identifierValues) });
    }
  }
  return findings;
}

/** Soft rules would ask the model about every record: a tool that must answer at once and write nothing skips them. */
export function skippedSoftNodes(skill: Skill): SkippedNode[] {
  return Object.entries(skill.nodes).flatMap(([node, definition]) =>
    definition.type === 'soft_instruction'
      ? [{ node, reason: 'soft rule: a model judges each record, which takes model calls and writes a trace; it is not tried here. Run QC on a few records (POST /qc-runs with recordIds) to see its verdicts.' }]
      : [],
  );
}
