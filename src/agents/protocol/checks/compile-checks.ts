import { ClinAgentError } from '../../../core/errors.js';
import type { EligibilityCriterion, ProtocolContext } from '../context.js';
import { criterionTest } from './criterion-test.js';
import { describeTest, describeWindow, exclusionLogic, inclusionLogic, visitWindowLogic } from './rule-logic.js';
import { renderSkillYaml } from './skill-yaml.js';
import type { CompiledProtocolChecks, ProtocolCheck, SkillDefinition, SkillHardRule, SkippedCheck } from './types.js';
import { visitLabel, visitWindows } from './visit-windows.js';

interface CompileProtocolChecksOptions {
  /** The skill's id: 1-64 lowercase letters, digits, - or _ (the skill file format's rule). */
  skillId: string;
  name?: string;
  /** Trial project ids the skill applies to; absent means every project. */
  projects?: string[];
}

/** The skill file format's id rule (src/trial/sop/skill-schema.ts), checked here to fail before any YAML is made. */
const SKILL_ID = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** The node ids of the generated skill; the review node mirrors the shipped demo skill. */
export const CHECKS_NODE = 'protocol_checks';
const REVIEW_NODE = 'dm_review';

/**
 * Compiles the protocol's eligibility criteria and visit schedule into a QC skill: inclusion rules fire when a
 * record does not meet the criterion, exclusion rules when it does, visit-window rules when a visit's date is
 * outside its window. A criterion or visit that cannot be checked is listed in `skipped` with what to add.
 * Throws VALIDATION_FAILED for a bad skill id, or when nothing at all can be checked (a skill needs a rule).
 */
export function compileProtocolChecks(context: ProtocolContext, options: CompileProtocolChecksOptions): CompiledProtocolChecks {
  if (!SKILL_ID.test(options.skillId)) {
    throw new ClinAgentError('VALIDATION_FAILED', `Skill id ${JSON.stringify(options.skillId)} is invalid: use 1-64 lowercase letters, digits, - or _ (e.g. "protocol-checks").`, {
      skillId: options.skillId,
    });
  }
  const checks: ProtocolCheck[] = [];
  const rules: SkillHardRule[] = [];
  const skipped: SkippedCheck[] = [];
  const eligibility = context.pico?.eligibility;

  for (const source of ['inclusion', 'exclusion'] as const) {
    (eligibility?.[source] ?? []).forEach((criterion, index) => {
      const outcome = criterionTest(criterion);
      if ('reason' in outcome) {
        skipped.push({ source, text: criterionText(criterion), reason: outcome.reason });
        return;
      }
      const { test } = outcome;
      const ruleId = `${source}-${index + 1}-${test.field}`;
      const text = criterionText(criterion);
      checks.push({ ruleId, source, criterion: text, test });
      rules.push({
        id: ruleId,
        field: test.field,
        logic: source === 'inclusion' ? inclusionLogic(test) : exclusionLogic(test),
        message:
          source === 'inclusion'
            ? `Inclusion criterion not met or not recorded: "${text}" needs ${describeTest(test)}`
            : `Exclusion criterion met: "${text}" (${describeTest(test)}); the subject should not have been enrolled`,
        severity: 'error',
      });
    });
  }

  const visits = visitWindows(context.studyDesign);
  skipped.push(...visits.skipped);
  visits.windows.forEach(({ visit, window }, index) => {
    const ruleId = `visit-window-${index + 1}-${window.dateField.split('.')[0]!}`;
    const criterion = visitLabel(visit);
    checks.push({ ruleId, source: 'visit_window', criterion, window });
    rules.push({
      id: ruleId,
      field: window.dateField,
      logic: visitWindowLogic(window),
      message: `${visit.name || 'The visit'} is outside its window (${describeWindow(window)}): protocol deviation`,
      severity: 'warning',
    });
  });

  if (rules.length === 0) throw nothingToCheck(skipped);
  const skill = skillDefinition(options, rules, checks);
  return { skill, yaml: renderSkillYaml(skill, skipped), rules: checks, skipped };
}

function skillDefinition(options: CompileProtocolChecksOptions, rules: SkillHardRule[], checks: ProtocolCheck[]): SkillDefinition {
  const count = (source: ProtocolCheck['source']) => checks.filter((check) => check.source === source).length;
  const summary = `${count('inclusion')} inclusion, ${count('exclusion')} exclusion, ${count('visit_window')} visit window`;
  return {
    id: options.skillId,
    name: options.name?.trim() || 'Protocol eligibility and visit-window checks',
    description: `Checks compiled from the protocol (${summary}). Subjects with findings go to a data manager for review before queries are sent to the site.`,
    ...(options.projects?.length ? { projects: options.projects } : {}),
    start_node: CHECKS_NODE,
    nodes: {
      [CHECKS_NODE]: { type: 'hard_rule', description: `Eligibility criteria and visit windows of the protocol (${summary})`, rules, on_pass: 'end_clean', on_fail: REVIEW_NODE },
      [REVIEW_NODE]: {
        type: 'human_review',
        description: 'A data manager confirms the findings of this subject before the queries go to the site.',
        on_approve: 'end_confirmed',
        on_reject: 'end_dismissed',
      },
    },
  };
}

function criterionText(criterion: EligibilityCriterion): string {
  return criterion.text?.trim() || '(criterion without text)';
}

function nothingToCheck(skipped: readonly SkippedCheck[]): ClinAgentError {
  const lines = skipped.map((item) => `  ${item.source} "${item.text}": ${item.reason}`);
  const message = skipped.length
    ? ['Nothing in the protocol can be checked yet; fix at least one of these:', ...lines].join('\n')
    : 'The protocol has no eligibility criteria and no visit schedule yet: add them (PICO and study design stages) to generate checks.';
  return new ClinAgentError('VALIDATION_FAILED', message, { skipped });
}
