import { Document, isMap, isSeq } from 'yaml';
import { ClinAgentError, errorMessage } from '../../core/errors.js';
import { compileRules, createRuleEngine } from '../rules/index.js';
import { compileRedcapLogic, type JsonLogic } from '../rules/redcap-logic/index.js';
import { parseRedcapLogic } from '../rules/redcap-logic/parser.js';
import type { Node } from '../rules/redcap-logic/ast.js';
import { checkAgainstDictionary, type ProjectDictionary } from '../skills/dictionary-check.js';
import { ARMS_FIELD } from '../sop/record-context.js';
import type { RedcapDqRule } from './redcap-dq-rules.js';

export type RuleSeverity = 'error' | 'warning' | 'info';

/** One sent rule as it would be imported, or why not: what the console's preview lists. */
export interface RedcapDqRuleListing {
  /** 1-based position among the rules sent (the CSV's rows in file order). */
  position: number;
  /** The CSV line, for rules sent as a CSV. */
  line?: number;
  name: string;
  logic: string;
  status: 'importable' | 'refused';
  /** Importable: the rule's id in the skill, the field its query is raised on, and its severity. */
  ruleId?: string;
  field?: string;
  severity?: RuleSeverity;
  /** The arms whose subjects the rule applies to, when it names events of some arms only; absent: every subject. */
  arms?: number[];
  /** Refused: why. */
  reason?: string;
}

export interface RedcapDqImport {
  /** The skill as YAML, each rule under a comment quoting its REDCap logic: what the editor shows. */
  yaml: string;
  /** The same skill as an object (a skill file's shape). */
  definition: Record<string, unknown>;
  /** Rules left out, and why; also a dictionary that could not be checked. */
  problems: Array<{ rule: string; message: string }>;
  /** How many of the sent rules the skill holds. */
  imported: number;
  /** Every sent rule in order, as imported or why not. */
  rules: RedcapDqRuleListing[];
}

/** A hard rule made from a REDCap rule: fires where the REDCap logic is true. */
interface ImportedRule {
  id: string;
  field: string;
  logic: { '!': JsonLogic };
  message: string;
  severity: RuleSeverity;
}

export interface RedcapDqImportInput {
  rules: readonly RedcapDqRule[];
  skillId: string;
  name: string;
  projectId: string;
  /** The project's dictionary and event names, which every field the logic reads is checked against; undefined before anything is imported. */
  dictionary: ProjectDictionary | undefined;
  /** The arm (REDCap arm_num) of each of the project's events; empty for a project without events. */
  eventArms?: ReadonlyMap<string, number>;
}

/** The hard_rule node the rules go into, and the review the SOP passes a flagged record to (as the shipped skills do). */
const RULES_NODE = 'redcap_dq';
const REVIEW_NODE = 'dm_review';
/** Severity of a rule sent without one: what every imported rule had before severities could be chosen. */
const DEFAULT_SEVERITY: RuleSeverity = 'error';

/**
 * A skill holding a site's REDCap Data Quality rules, one hard rule each: REDCap logic describes the discrepancy,
 * so the rule passes when it is false (`{"!": compiled}`); the rule's field is the first field the logic reads, its
 * message the rule's name, its severity the one sent with it (DEFAULT_SEVERITY without). A rule whose logic does
 * not compile (an unsupported function, a syntax error) or reads a field or event the project does not have is
 * listed in `problems` and left out; the others are imported. A rule naming events of some arms only applies to
 * the subjects of those arms, as in REDCap (armGuard). Nothing is saved: the skill is for the editor, where it is
 * reviewed and saved. SKILL_INVALID when no rule could be imported.
 */
export function importRedcapDqRules(input: RedcapDqImportInput): RedcapDqImport {
  const listed = listRedcapDqRules(input);
  if (!listed.imported.length) {
    const { problems } = listed;
    throw new ClinAgentError('SKILL_INVALID', `None of the ${input.rules.length} REDCap rules could be imported:\n- ${problems.map((p) => `${p.rule}: ${p.message}`).join('\n- ')}`, { problems: problems.map((p) => ({ path: p.rule, message: p.message })) });
  }
  const definition = skillDefinition(input, listed.imported);
  return { yaml: toYaml(definition, listed.commentOf), definition, problems: listed.problems, imported: listed.imported.length, rules: listed.rules };
}

/**
 * The preview: every rule as importRedcapDqRules would import it, or why not, and the skill definition it would
 * build (absent when no rule is importable), for the checks the import makes of it; never throws for the rules.
 */
export function previewRedcapDqRules(input: RedcapDqImportInput): Pick<RedcapDqImport, 'problems' | 'imported' | 'rules'> & { definition?: Record<string, unknown> } {
  const listed = listRedcapDqRules(input);
  const definition = listed.imported.length ? { definition: skillDefinition(input, listed.imported) } : {};
  return { problems: listed.problems, imported: listed.imported.length, rules: listed.rules, ...definition };
}

function listRedcapDqRules(input: RedcapDqImportInput) {
  const problems: RedcapDqImport['problems'] = [];
  const engine = createRuleEngine();
  if (!input.dictionary) problems.push({ rule: '(dictionary)', message: `project "${input.projectId}" has no data dictionary yet, so the fields the rules read were not checked; import the project's data first and import the rules again` });

  const eventArms = input.eventArms ?? new Map<string, number>();
  const allArms = new Set(eventArms.values());
  const imported: ImportedRule[] = [];
  const listing: RedcapDqRuleListing[] = [];
  const commentOf = new Map<string, string>();
  const ids = new Set<string>();
  input.rules.forEach((source, index) => {
    const entry: RedcapDqRuleListing = { position: index + 1, ...(source.line === undefined ? {} : { line: source.line }), name: source.name, logic: source.logic, status: 'refused' };
    listing.push(entry);
    const reject = (message: string) => {
      entry.reason = message;
      problems.push({ rule: source.name, message });
    };
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
    const arms = armsOf(refs, eventArms);
    const guard = arms.length && arms.length < allArms.size ? armGuard(arms) : undefined;
    const severity = source.severity ?? DEFAULT_SEVERITY;
    const id = uniqueId(slug(source.name) || `rule-${index + 1}`, ids);
    const rule: ImportedRule = { id, field: refs[0]!.path, logic: { '!': guard === undefined ? compiled : { and: [guard, compiled] } }, message: source.name, severity };
    try {
      compileRules([rule], { engine });
    } catch (error) {
      ids.delete(id);
      return void reject(errorMessage(error));
    }
    // The editor's own dictionary check (events, fields, checkbox choices, with the nearest name for a typo).
    const unknown = input.dictionary ? checkAgainstDictionary({ nodes: { [RULES_NODE]: rulesNode([rule]) } }, input.dictionary, engine, { nameProject: false }) : [];
    // The rule's field is the logic's first field, so the problems of what the logic reads say it all.
    const reads = unknown.filter((problem) => !problem.path.endsWith('.field')).map((problem) => problem.message.replace(/^rule "[^"]*" \(node [^)]*\) /, 'the logic '));
    if (reads.length) {
      ids.delete(id);
      return void reject(`${[...new Set(reads)].join('; ')} (logic: ${source.logic})`);
    }
    imported.push(rule);
    Object.assign(entry, { status: 'importable', ruleId: id, field: rule.field, severity, ...(guard === undefined ? {} : { arms }) });
    const armNote = guard === undefined ? '' : `\n only for subjects in arm${arms.length > 1 ? 's' : ''} ${arms.join(', ')}, whose schedule has the event${arms.length > 1 ? 's' : ''} it names`;
    commentOf.set(id, ` REDCap: ${source.logic.replace(/\s+/g, ' ')}${armNote}`);
  });
  return { imported, rules: listing, problems, commentOf };
}

/** The arms of the events the logic names (`[visit_1_arm_1][vld1]`), in order; none for first-visit fields alone. */
function armsOf(refs: ReadonlyArray<Extract<Node, { type: 'ref' }>>, eventArms: ReadonlyMap<string, number>): number[] {
  const arms = new Set<number>();
  for (const ref of refs) {
    const event = ref.path.includes('.') ? ref.path.slice(0, ref.path.indexOf('.')) : undefined;
    const arm = event === undefined ? undefined : eventArms.get(event);
    if (arm !== undefined) arms.add(arm);
  }
  return [...arms].sort((a, b) => a - b);
}

/**
 * True for a subject of one of `arms` (the record context's redcap_arms, the arms of the events it has). REDCap
 * Data Quality evaluates an event-qualified rule for the records of the arms that have the event: a subject of
 * arm 2 has no visit_1_arm_1, and `[visit_1_arm_1][vld1] = ''` is no discrepancy of theirs.
 */
function armGuard(arms: readonly number[]): JsonLogic {
  const inArm = (arm: number): JsonLogic => ({ in: [arm, { var: [ARMS_FIELD, []] }] });
  return arms.length === 1 ? inArm(arms[0]!) : { or: arms.map(inArm) };
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

/** YAML with each rule under a comment quoting the REDCap logic it came from (and the arms it is for), and the compiled logic on one line. */
function toYaml(definition: Record<string, unknown>, commentOf: ReadonlyMap<string, string>): string {
  // The compiler shares sub-expressions between branches; written out each time, as an author would, not as YAML aliases.
  const doc = new Document(definition, { aliasDuplicateObjects: false });
  const rules = doc.getIn(['nodes', RULES_NODE, 'rules'], true);
  if (isSeq(rules)) {
    for (const item of rules.items) {
      if (!isMap(item)) continue;
      const comment = commentOf.get(String(item.get('id')));
      if (comment !== undefined) item.commentBefore = comment;
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
