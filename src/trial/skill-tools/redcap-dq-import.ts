import { Document, isMap, isSeq } from 'yaml';
import { ClinAgentError, errorMessage } from '../../core/errors.js';
import { compileRules, createRuleEngine } from '../rules/index.js';
import { compileRedcapLogic, type JsonLogic } from '../rules/redcap-logic/index.js';
import { parseRedcapLogic } from '../rules/redcap-logic/parser.js';
import type { Node } from '../rules/redcap-logic/ast.js';
import { checkAgainstDictionary, type ProjectDictionary } from '../skills/dictionary-check.js';
import type { RedcapDqRule } from './redcap-dq-rules.js';

export interface RedcapDqImport {
  /** The skill as YAML, each rule under a comment quoting its REDCap logic: what the editor shows. */
  yaml: string;
  /** The same skill as an object (a skill file's shape). */
  definition: Record<string, unknown>;
  /** Rules left out, and why; also a dictionary that could not be checked. */
  problems: Array<{ rule: string; message: string }>;
  /** How many of the sent rules the skill holds. */
  imported: number;
}

/** A hard rule made from a REDCap rule: fires where the REDCap logic is true. */
interface ImportedRule {
  id: string;
  field: string;
  logic: { '!': JsonLogic };
  message: string;
}

export interface RedcapDqImportInput {
  rules: readonly RedcapDqRule[];
  skillId: string;
  name: string;
  projectId: string;
  /** The project's dictionary and event names, which every field the logic reads is checked against; undefined before anything is imported. */
  dictionary: ProjectDictionary | undefined;
}

/** The hard_rule node the rules go into, and the review the SOP passes a flagged record to (as the shipped skills do). */
const RULES_NODE = 'redcap_dq';
const REVIEW_NODE = 'dm_review';

/**
 * A skill holding a site's REDCap Data Quality rules, one hard rule each: REDCap logic describes the discrepancy,
 * so the rule passes when it is false (`{"!": compiled}`); the rule's field is the first field the logic reads, its
 * message the rule's name. A rule whose logic does not compile (an unsupported function, a syntax error) or reads a
 * field or event the project does not have is listed in `problems` and left out; the others are imported. Nothing
 * is saved: the skill is for the editor, where it is reviewed and saved. SKILL_INVALID when no rule could be imported.
 */
export function importRedcapDqRules(input: RedcapDqImportInput): RedcapDqImport {
  const problems: RedcapDqImport['problems'] = [];
  const engine = createRuleEngine();
  if (!input.dictionary) problems.push({ rule: '(dictionary)', message: `project "${input.projectId}" has no data dictionary yet, so the fields the rules read were not checked; import the project's data first and import the rules again` });

  const rules: ImportedRule[] = [];
  const logicOf = new Map<string, string>();
  const ids = new Set<string>();
  input.rules.forEach((source, index) => {
    const reject = (message: string) => problems.push({ rule: source.name, message });
    let compiled: JsonLogic;
    let refs: Array<Extract<Node, { type: 'ref' }>>;
    try {
      compiled = compileRedcapLogic(source.logic);
      refs = refsOf(parseRedcapLogic(source.logic));
    } catch (error) {
      reject(`${errorMessage(error)} (logic: ${source.logic})`);
      return;
    }
    if (!refs.length) return void reject('the logic reads no field, so it would flag every record or none; name the field it checks, e.g. [age] < 18');
    const id = uniqueId(slug(source.name) || `rule-${index + 1}`, ids);
    const rule: ImportedRule = { id, field: refs[0]!.path, logic: { '!': compiled }, message: source.name };
    try {
      compileRules([rule], { engine });
    } catch (error) {
      return void reject(errorMessage(error));
    }
    // The editor's own dictionary check (events, fields, checkbox choices, with the nearest name for a typo).
    const unknown = input.dictionary ? checkAgainstDictionary({ nodes: { [RULES_NODE]: rulesNode([rule]) } }, input.dictionary, engine, { nameProject: false }) : [];
    // The rule's field is the logic's first field, so the problems of what the logic reads say it all.
    const reads = unknown.filter((problem) => !problem.path.endsWith('.field')).map((problem) => problem.message.replace(/^rule "[^"]*" \(node [^)]*\) /, 'the logic '));
    if (reads.length) return void reject(`${[...new Set(reads)].join('; ')} (logic: ${source.logic})`);
    rules.push(rule);
    logicOf.set(id, source.logic);
  });
  if (!rules.length) {
    throw new ClinAgentError('SKILL_INVALID', `None of the ${input.rules.length} REDCap rules could be imported:\n- ${problems.map((p) => `${p.rule}: ${p.message}`).join('\n- ')}`, { problems: problems.map((p) => ({ path: p.rule, message: p.message })) });
  }
  const definition = skillDefinition(input, rules);
  return { yaml: toYaml(definition, logicOf), definition, problems, imported: rules.length };
}

function skillDefinition(input: RedcapDqImportInput, rules: ImportedRule[]): Record<string, unknown> {
  return {
    id: input.skillId,
    name: input.name,
    description: `REDCap Data Quality rules of project ${input.projectId} (${rules.length}), compiled to JSON Logic; a rule fires where its REDCap logic is true.`,
    projects: [input.projectId],
    start_node: RULES_NODE,
    nodes: {
      [RULES_NODE]: rulesNode(rules),
      [REVIEW_NODE]: {
        type: 'human_review',
        description: 'A data manager confirms the Data Quality findings of this subject before the queries go to the site.',
        on_approve: 'end_confirmed',
        on_reject: 'end_dismissed',
      },
    },
  };
}

function rulesNode(rules: ImportedRule[]) {
  return { type: 'hard_rule' as const, description: 'REDCap Data Quality rules', rules, on_pass: 'end_clean', on_fail: REVIEW_NODE };
}

/** YAML with each rule under a comment quoting the REDCap logic it came from, and the compiled logic on one line. */
function toYaml(definition: Record<string, unknown>, logicOf: ReadonlyMap<string, string>): string {
  // The compiler shares sub-expressions between branches; written out each time, as an author would, not as YAML aliases.
  const doc = new Document(definition, { aliasDuplicateObjects: false });
  const rules = doc.getIn(['nodes', RULES_NODE, 'rules'], true);
  if (isSeq(rules)) {
    for (const item of rules.items) {
      if (!isMap(item)) continue;
      const logic = logicOf.get(String(item.get('id')));
      if (logic !== undefined) item.commentBefore = ` REDCap: ${logic.replace(/\s+/g, ' ')}`;
      const compiled = item.get('logic', true);
      if (isMap(compiled)) compiled.flow = true;
    }
  }
  return doc.toString({ lineWidth: 0 });
}

/** Field references in the order the logic reads them. */
function refsOf(node: Node): Array<Extract<Node, { type: 'ref' }>> {
  const refs: Array<Extract<Node, { type: 'ref' }>> = [];
  const walk = (current: Node): void => {
    switch (current.type) {
      case 'ref':
        refs.push(current);
        return;
      case 'compare':
      case 'arithmetic':
        walk(current.left);
        walk(current.right);
        return;
      case 'negate':
      case 'not':
        walk(current.operand);
        return;
      case 'logical':
        current.operands.forEach(walk);
        return;
      case 'call':
        current.args.forEach(walk);
        return;
      default:
        return;
    }
  };
  walk(node);
  return refs;
}

/** A rule id from its name: lower-case letters, digits and dashes, as skill rule ids are written. */
function slug(name: string): string {
  return name
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60)
    .replace(/-+$/, '');
}

function uniqueId(base: string, taken: Set<string>): string {
  let id = base;
  for (let n = 2; taken.has(id); n++) id = `${base}-${n}`;
  taken.add(id);
  return id;
}
