import type { ImportRedcapRulesRequest, ImportRedcapRulesResult, RedcapRuleListing } from '../../../api/skills-api';

export type RuleSeverity = NonNullable<RedcapRuleListing['severity']>;
export const SEVERITIES: readonly RuleSeverity[] = ['error', 'warning', 'info'];

/** The severity picked for each importable rule of a preview, by position; what the server proposed until changed. */
export function initialSeverities(preview: ImportRedcapRulesResult): Record<number, RuleSeverity> {
  const out: Record<number, RuleSeverity> = {};
  for (const rule of preview.rules) if (rule.status === 'importable' && rule.severity) out[rule.position] = rule.severity;
  return out;
}

/**
 * The import after a preview: the previewed rules as a list, in their order (so each keeps the id the preview showed),
 * each importable one with the severity picked for it. Refused rules are sent too: the server lists them again in
 * its problems, as the preview did.
 */
export function importRequest(preview: ImportRedcapRulesResult, severities: Readonly<Record<number, RuleSeverity>>, skill: { skillId: string; name: string }): ImportRedcapRulesRequest {
  return {
    skillId: skill.skillId,
    name: skill.name,
    rules: preview.rules.map((rule) => {
      const severity = rule.status === 'importable' ? (severities[rule.position] ?? rule.severity) : undefined;
      return { name: rule.name, logic: rule.logic, ...(severity ? { severity } : {}) };
    }),
  };
}
