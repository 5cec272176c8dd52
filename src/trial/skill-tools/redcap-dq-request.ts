import type { Db } from '../../core/db/connect.js';
import { ClinAgentError } from '../../core/errors.js';
import { loadDictionaries } from '../skills/load-dictionaries.js';
import { getEvents } from '../store/dictionary.js';
import { previewRedcapDqRules, type RedcapDqImport, type RedcapDqImportInput, type RuleSeverity } from './redcap-dq-import.js';
import { readRedcapDqCsv, type RedcapDqRule } from './redcap-dq-rules.js';

export interface RedcapRulesImportRequest {
  csv?: string;
  rules?: RedcapDqRule[];
  skillId: string;
  name: string;
  /** True: list each rule as it would be imported, or why not, and build no skill. */
  preview?: boolean;
  /** Severity by rule name, for rules sent as CSV (or a list without their own); the rest get DEFAULT_SEVERITY. */
  severities?: Record<string, RuleSeverity>;
}

/** The rules of a request (its CSV or its list), each with its severity, and what in the CSV could not be read. */
export function readRedcapRulesRequest(input: RedcapRulesImportRequest): { rules: RedcapDqRule[]; problems: Array<{ rule: string; message: string }> } {
  const hasCsv = typeof input.csv === 'string';
  if (hasCsv === Array.isArray(input.rules)) {
    throw new ClinAgentError('VALIDATION_FAILED', `Send the REDCap rules once: as "csv" (REDCap's Data Quality rules export: rule_name,rule_logic,...) or as "rules" ([{name, logic}]), ${hasCsv ? 'not both' : 'one of them is required'}.`, { field: hasCsv ? 'rules' : 'csv' });
  }
  const read = hasCsv ? readRedcapDqCsv(input.csv!) : { rules: input.rules!.map((rule) => ({ ...rule, name: rule.name.trim(), logic: rule.logic.trim() })), problems: [] };
  const severities = input.severities ?? {};
  const unknown = Object.keys(severities).filter((name) => !read.rules.some((rule) => rule.name === name));
  if (unknown.length) {
    throw new ClinAgentError('VALIDATION_FAILED', `"severities" names ${unknown.map((name) => `"${name}"`).join(', ')}, which no rule sent is called; key each severity by a rule's name as the file writes it (rule_name).`, { field: 'severities', names: unknown });
  }
  const rules = read.rules.map((rule) => {
    const severity = rule.severity ?? (Object.hasOwn(severities, rule.name) ? severities[rule.name] : undefined);
    return severity === undefined ? rule : { ...rule, severity };
  });
  return { rules, problems: read.problems };
}

/** What the importer checks the rules against: the project's dictionary, and the arm of each of its events. */
export async function redcapImportContext(db: Db, projectId: string): Promise<Pick<RedcapDqImportInput, 'dictionary' | 'eventArms'>> {
  const { dictionaries } = await loadDictionaries(db, [projectId]);
  const eventArms = new Map((await getEvents(db, projectId)).map((event) => [event.eventName, event.armNum]));
  return { dictionary: dictionaries[0], eventArms };
}

type RedcapDqPreview = Pick<RedcapDqImport, 'problems' | 'imported' | 'rules'> & { preview: true };

/**
 * The preview of an import: every rule listed as it would be imported or why not. `accepts` is the check the import
 * makes of the whole skill (readProposedSkill: activation's checks, and who may use rules reading identifier fields);
 * a refusal naming rules (FORBIDDEN with `details.rules`) marks those rules refused with its reason, so the preview
 * never promises a rule the import would refuse.
 */
export async function previewRedcapRulesImport(input: RedcapDqImportInput, readProblems: RedcapDqPreview['problems'], accepts: (definition: Record<string, unknown>) => Promise<unknown>): Promise<RedcapDqPreview> {
  const { definition, ...preview } = previewRedcapDqRules(input);
  if (definition) {
    try {
      await accepts(definition);
    } catch (error) {
      const refused = refusedReads(error);
      if (!refused) throw error;
      for (const rule of preview.rules) {
        const fields = rule.ruleId === undefined ? undefined : refused.get(rule.ruleId);
        if (!fields) continue;
        const reason = `the logic reads the identifier field${fields.length > 1 ? 's' : ''} ${fields.join(', ')}, which you may not see in this trial, and its findings would tell you the values; someone who sees identifiers here (its PI or an admin) may import it`;
        for (const key of ['ruleId', 'field', 'severity', 'arms'] as const) delete rule[key];
        Object.assign(rule, { status: 'refused', reason });
        preview.problems.push({ rule: rule.name, message: reason });
      }
    }
  }
  const imported = preview.rules.filter((rule) => rule.status === 'importable').length;
  return { preview: true, rules: preview.rules, imported, problems: [...readProblems, ...preview.problems] };
}

/**
 * The identifier fields each refused rule reads, from a FORBIDDEN refusal of rules reading them
 * (identifier-rule-access.ts: `details.rules`, every rule, where `details.reads` stops at 50); undefined for any
 * other error.
 */
function refusedReads(error: unknown): Map<string, string[]> | undefined {
  if (!(error instanceof ClinAgentError) || error.code !== 'FORBIDDEN') return undefined;
  const rules = (error.details as { rules?: unknown } | undefined)?.rules;
  if (!Array.isArray(rules)) return undefined;
  return new Map((rules as Array<{ rule: string; fields: string[] }>).map(({ rule, fields }) => [rule, fields]));
}
