import type { RecordCrf } from '../../../api';

/** A field of the trial's dictionary for the new-skill template to check, with the visit it is read at. */
export interface TemplateField {
  /** '' in a classic (non-longitudinal) trial. */
  eventName: string;
  name: string;
  label: string;
  isNumber: boolean;
}

const NUMERIC = new Set(['integer', 'number']);

/**
 * The field a new skill's example rule reads: the dictionary's first number field (else its first field) that is
 * not an identifier, at the first visit that records it. Never an identifier: a rule reading one is for those with
 * identifier access only. Null when the trial has no dictionary or no such field.
 */
export function templateFieldOf(crf: RecordCrf | null): TemplateField | null {
  if (!crf) return null;
  const fields = crf.forms.flatMap((form) => form.fields.filter((field) => !field.identifier && !crf.maskedFields.includes(field.name)).map((field) => ({ form, field })));
  const chosen = fields.find(({ field }) => NUMERIC.has(field.type)) ?? fields.find(({ field }) => field.type !== 'descriptive');
  if (!chosen) return null;
  const event = crf.events.find((candidate) => candidate.eventName in crf.values && chosen.field.name in (crf.values[candidate.eventName] ?? {})) ?? crf.events[0];
  return { eventName: event?.eventName ?? '', name: chosen.field.name, label: chosen.field.label || chosen.field.name, isNumber: NUMERIC.has(chosen.field.type) };
}

const quoted = (text: string) => JSON.stringify(text);

/**
 * The YAML a new skill starts from: one rule on a field this trial has (so it validates as written), to be
 * changed; without a dictionary, a placeholder the validator names until a real field replaces it.
 */
export function newSkillTemplate(projectId: string, field: TemplateField | null): string {
  const name = field ? (field.eventName ? `${field.eventName}.${field.name}` : field.name) : 'your_field';
  const ruleId = field ? `${field.name.replace(/_/g, '-')}-${field.isNumber ? 'not-negative' : 'filled'}` : 'your-rule';
  const logic = field?.isNumber ? `{ ">=": [{ var: ${name} }, 0] }` : `{ "!!": [{ var: ${name} }] }`;
  const message = field ? (field.isNumber ? `${field.label} cannot be negative` : `${field.label} is required`) : 'Say what is wrong and how the site fixes it';
  const intro = field
    ? `# A new QC skill for ${projectId}: change the id, the rules and the messages.`
    : `# A new QC skill for ${projectId}. This trial has no data dictionary yet: import one, then name its fields.`;
  return `${intro}
id: new-checks
name: New checks
projects: [${projectId}]
start_node: checks
nodes:
  checks:
    type: hard_rule
    rules:
      - id: ${ruleId}
        field: ${name}
        logic: ${logic}
        message: ${quoted(message)}
        severity: error
    on_pass: end_ok
    on_fail: end_flagged
`;
}
