import { parse as parseYaml } from 'yaml';
import { ClinAgentError } from '../../../core/errors.js';
import { CHECKS_NODE } from './compile-checks.js';
import { generateTestRecords } from './test-records.js';
import type { CheckVerification, CompiledProtocolChecks, ProtocolChecksVerification, SkillHardRule } from './types.js';

/**
 * The QC rule engine, passed in: the trial area's `compileRules` (src/trial/rules), the function the skill
 * loader compiles every hard-rule node with. An agent may not import the trial area, and evaluating the rules
 * any other way would prove nothing about how QC will run them.
 */
interface HardRuleEngine {
  compileRules(rules: SkillHardRule[]): { run(data: Record<string, unknown>): ReadonlyArray<{ ruleId: string; message: string }> };
}

/**
 * Runs every generated test record through the rule engine and compares, rule by rule, whether it fired with
 * whether it must. The rules are read back from the YAML text, so what passes is the file a data manager
 * installs, not an object that might differ from it. A rule set the engine refuses throws its compile error.
 */
export function verifyProtocolChecks(compiled: CompiledProtocolChecks, engine: HardRuleEngine): ProtocolChecksVerification {
  const rules = engine.compileRules(rulesFromYaml(compiled.yaml));
  const results = generateTestRecords(compiled).map((record): CheckVerification => {
    const violation = rules.run(record.data).find((found) => found.ruleId === record.ruleId);
    const actual = violation ? 'fires' : 'passes';
    return {
      ruleId: record.ruleId,
      record: record.label,
      expected: record.expected,
      actual,
      ok: actual === record.expected,
      ...(violation ? { violation: violation.message } : {}),
    };
  });
  return { passed: results.length > 0 && results.every((result) => result.ok), results };
}

function rulesFromYaml(yaml: string): SkillHardRule[] {
  const file = parseYaml(yaml) as { nodes?: Record<string, { rules?: unknown }> } | null;
  const rules = file?.nodes?.[CHECKS_NODE]?.rules;
  if (!Array.isArray(rules)) {
    throw new ClinAgentError('VALIDATION_FAILED', `The checks YAML has no rules under nodes.${CHECKS_NODE}: compile the checks again with compileProtocolChecks.`, {});
  }
  return rules as SkillHardRule[];
}
