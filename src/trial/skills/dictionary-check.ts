import { distance } from 'fastest-levenshtein';
import { splitPath } from 'json-logic-engine';
import { logicFieldReferences, type RuleEngine } from '../rules/index.js';
import type { SkillFile } from '../sop/skill-schema.js';
import type { SkillProblem } from './skill-problem.js';

/** What a skill's field names are checked against: one project's dictionary and event names. */
export interface ProjectDictionary {
  projectId: string;
  fields: ReadonlyArray<{ fieldName: string; fieldType: string; choices: ReadonlyArray<{ code: string }> }>;
  events: readonly string[];
}

/** Fields every record context has besides the dictionary's (record-context.ts adds them; redcap_arms in longitudinal projects). */
const CONTEXT_FIELDS = ['record_id', 'site', 'redcap_arms'];

/**
 * Every field name a skill reads, checked against a project's dictionary: each rule's `field`, every name its JSON
 * Logic reads (`var`, `val`, `exists`, `missing`, `missing_some`), and soft rules' `field`. A name is a field
 * (first-visit fields are at the top level), `event.field`, or a checkbox option `field___code` (REDCap stores a
 * checkbox as one column per choice). An unknown name is a problem naming the rule and, when one is close, the
 * dictionary name it probably meant (`wieght` → `weight`); an unknown event likewise with the project's events.
 */
export function checkAgainstDictionary(skill: Pick<SkillFile, 'nodes'>, dictionary: ProjectDictionary, engine: RuleEngine, options: { nameProject: boolean }): SkillProblem[] {
  const names = readableNames(dictionary);
  const events = new Set(dictionary.events);
  const checkboxes = new Map(dictionary.fields.filter((f) => f.fieldType === 'checkbox').map((f) => [f.fieldName, f.choices.map((c) => `${f.fieldName}___${c.code}`)]));
  const inProject = options.nameProject ? ` in project "${dictionary.projectId}"` : '';
  const problems: SkillProblem[] = [];

  /** `isQueryField`: a rule's `field` (the CRF field its query points at), where a checkbox's own name is right. */
  const check = (name: string, path: string, who: string, isQueryField: boolean) => {
    const [head, next] = splitPath(name).map(String);
    if (head === undefined) return;
    const verb = isQueryField ? `${who} raises its query on` : `${who} reads`;
    const isField = (field: string) => names.has(field) || (isQueryField && checkboxes.has(field));
    const checkField = (field: string, event?: string) => {
      if (isField(field)) return;
      const where = `${event ? ` of event "${event}"` : ''}${inProject}`;
      const choices = checkboxes.get(field);
      if (choices) {
        problems.push({ path, message: `${verb} "${field}"${where}, a checkbox field: its values are read per choice (${choices.join(', ')})`, suggestion: choices[0], word: field });
        return;
      }
      problems.push(withSuggestion({ path, message: `${verb} unknown field "${field}"${where}` }, field, [...names]));
    };
    if (events.has(head)) {
      if (next !== undefined) checkField(next, head);
      // The query's value is what its field holds: a whole visit, identifier fields included, shown to every reader.
      else if (isQueryField) problems.push({ path, message: `${who} raises its query on event "${head}", not on a field${inProject}: name the field, as "${head}.<field>"`, word: head });
      return;
    }
    if (isField(head)) return;
    if (next !== undefined && events.size) {
      // `evnt.field`: the first part is no field, so it was meant as an event.
      problems.push(withSuggestion({ path, message: `${verb} unknown event "${head}"${inProject}` }, head, dictionary.events));
      checkField(next);
      return;
    }
    checkField(head);
  };

  for (const [nodeId, node] of Object.entries(skill.nodes)) {
    if (node.type === 'soft_instruction') {
      if (node.field !== '(record)') check(node.field, `nodes.${nodeId}.field`, `soft rule "${nodeId}"`, true);
      continue;
    }
    if (node.type !== 'hard_rule') continue;
    node.rules.forEach((rule, index) => {
      const base = `nodes.${nodeId}.rules[${index}]`;
      const who = `rule "${rule.id ?? `${rule.field}#${index}`}" (node ${nodeId})`;
      check(rule.field, `${base}.field`, who, true);
      for (const reference of logicFieldReferences(rule.logic, engine, `${base}.logic`)) check(reference.name, reference.path, who, false);
    });
  }
  return problems;
}

/** Names a rule can read at the top level or under an event: fields (checkboxes as their choice columns) and context fields. */
function readableNames(dictionary: ProjectDictionary): Set<string> {
  const names = new Set(CONTEXT_FIELDS);
  for (const field of dictionary.fields) {
    if (field.fieldType === 'checkbox') for (const choice of field.choices) names.add(`${field.fieldName}___${choice.code}`);
    else names.add(field.fieldName);
  }
  return names;
}

/**
 * Adds the closest known name when it is close enough to be a typo: at most a third of the name's letters differ
 * (two for short names), so `wieght` suggests `weight` but `foo` suggests nothing from a list of unrelated names.
 */
/**
 * Edit distance with two swapped neighbouring letters counted as one typo (`spb` for `sbp`), as people make them;
 * plain Levenshtein counts two, which ties `spb` with unrelated names such as `dob`.
 */
function typoDistance(word: string, candidate: string): number {
  const d = distance(word, candidate);
  return d === 2 && isOneSwap(word, candidate) ? 1 : d;
}

function isOneSwap(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  const differ = [...a].flatMap((ch, i) => (ch === b[i] ? [] : [i]));
  return differ.length === 2 && differ[1] === differ[0]! + 1 && a[differ[0]!] === b[differ[1]!] && a[differ[1]!] === b[differ[0]!];
}

function withSuggestion(problem: SkillProblem, word: string, candidates: readonly string[]): SkillProblem {
  if (!candidates.length) return problem;
  let best = candidates[0]!;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    const d = typoDistance(word, candidate);
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  const limit = Math.max(2, Math.floor(word.length / 3));
  if (bestDistance > limit) return { ...problem, word };
  return { ...problem, message: `${problem.message}; did you mean "${best}"?`, suggestion: best, word };
}
