import type { RecordCrf } from '../../../api';
import type { Translate } from '../../../i18n/translate';

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
 * changed; without a dictionary, a placeholder the validator names until a real field replaces it. Its comment, name
 * and message are in the console's language: the message is what the site reads until the author changes it.
 */
export function newSkillTemplate(projectId: string, field: TemplateField | null, t: Translate): string {
  const name = field ? (field.eventName ? `${field.eventName}.${field.name}` : field.name) : 'your_field';
  const ruleId = field ? `${field.name.replace(/_/g, '-')}-${field.isNumber ? 'not-negative' : 'filled'}` : 'your-rule';
  const logic = field?.isNumber ? `{ ">=": [{ var: ${name} }, 0] }` : `{ "!!": [{ var: ${name} }] }`;
  const message = field ? t(field.isNumber ? 'skillTemplate.notNegative' : 'skillTemplate.required', { label: field.label }) : t('skillTemplate.placeholderMessage');
  const intro = t(field ? 'skillTemplate.intro' : 'skillTemplate.noDictionary', { project: projectId });
  return `# ${intro}
id: new-checks
name: ${quoted(t('skillTemplate.name'))}
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
