import { splitPath } from 'json-logic-engine';
import { stableJson } from '../store/stable-json.js';

/**
 * What the rules of a skill read, for deciding who may write and try them (identifier-rule-access.ts). Unlike
 * check-logic's field references, which serve suggestions and may leave out what they cannot name, this errs on
 * the side of reading more: a name computed at run time, the whole record (`{"var": ""}`) or a whole event object
 * (`{"var": "v1_arm_1"}`, whose value holds every field of the visit) counts as reading every field.
 */
export interface SkillRead {
  /** The rule (its id, or `field#index` as QC names it) or soft node reading it. */
  rule: string;
  /** Where in the definition, e.g. `nodes.hard.rules[0].logic["!"].matches[0].var`. */
  path: string;
  /**
   * `field`: `name` is read (a field, a checkbox column, or `event.field`); `computed`: the name is worked out at
   * run time, so any field may be read; `whole`: `name` is a container (the record, '' , or an event), so every
   * field inside it is read.
   */
  kind: 'field' | 'computed' | 'whole';
  /** The segments read, as written (`v1_arm_1.phone` gives `v1_arm_1` and `phone`); empty for computed names. */
  segments: string[];
}

/** What tells a field from an event in one project. */
interface ReadContext {
  isEvent(name: string): boolean;
}

/** Operators whose later arguments run with another context (an array item, the previous step, a caught error). */
const RESCOPING = new Set(['map', 'filter', 'reduce', 'all', 'some', 'none', 'every', 'pipe', 'try']);
/** Bounds a walk over a hostile definition; deeper logic than this is refused by the skill checks anyway. */
const MAX_DEPTH = 400;

/**
 * Every read of every rule of a skill definition as stored (it may be an unfinished draft, so nothing in its shape
 * is assumed): the logic of each hard rule, the field each hard rule reports (its value goes into the query), and
 * the field of each soft rule. Reads deeper than MAX_DEPTH count as computed.
 */
export function skillReads(definition: unknown, context: ReadContext): SkillRead[] {
  const out: SkillRead[] = [];
  for (const rule of definitionRules(definition)) {
    const walk: Walk = { rule: rule.name, context, out };
    if (typeof rule.field === 'string') addName(walk, rule.field, `${rule.path}.field`, 'record');
    if (rule.hasLogic) visit(walk, rule.logic, `${rule.path}.logic`, 'record', 0);
  }
  return out;
}

/**
 * Each rule of a definition by its name (as skillReads names it) and everything that decides what it does, as
 * stable JSON: a rule of another version with the same name and content is the same rule.
 */
export function ruleContents(definition: unknown): Map<string, string> {
  return new Map(definitionRules(definition).map((rule) => [rule.name, stableJson(rule.content)]));
}

interface DefinitionRule {
  name: string;
  path: string;
  field: unknown;
  hasLogic: boolean;
  logic: unknown;
  content: unknown;
}

/** The hard rules of every node with rules, and every other node with a field (a soft rule), whatever the shape. */
function definitionRules(definition: unknown): DefinitionRule[] {
  const out: DefinitionRule[] = [];
  const nodes = isObject(definition) && isObject(definition.nodes) ? definition.nodes : {};
  for (const [nodeId, node] of Object.entries(nodes)) {
    if (!isObject(node)) continue;
    const nodePath = `nodes.${nodeId}`;
    if (Array.isArray(node.rules)) {
      node.rules.forEach((rule: unknown, index) => {
        if (!isObject(rule)) return;
        // As compileRules names a rule without an id.
        const name = typeof rule.id === 'string' && rule.id ? rule.id : `${typeof rule.field === 'string' ? rule.field : '(rule)'}#${index}`;
        out.push({ name, path: `${nodePath}.rules[${index}]`, field: rule.field, hasLogic: 'logic' in rule, logic: rule.logic, content: rule });
      });
    }
    if (typeof node.field === 'string' && node.type !== 'hard_rule') out.push({ name: nodeId, path: nodePath, field: node.field, hasLogic: false, logic: undefined, content: node });
  }
  return out;
}

/** The reads of one JSON Logic expression on its own (a REDCap rule compiled, a dry-run's rule). */
export function logicReads(logic: unknown, context: ReadContext, rule = '(rule)', root = 'logic'): SkillRead[] {
  const walk: Walk = { rule, context, out: [] };
  visit(walk, logic, root, 'record', 0);
  return walk.out;
}

interface Walk {
  rule: string;
  context: ReadContext;
  out: SkillRead[];
}

/** `record`: names are of the record (or of an outer scope); `item`: names are of an iterator's item. */
type Scope = 'record' | 'item';

function visit(walk: Walk, node: unknown, path: string, scope: Scope, depth: number): void {
  if (depth > MAX_DEPTH) {
    walk.out.push({ rule: walk.rule, path, kind: 'computed', segments: [] });
    return;
  }
  if (Array.isArray(node)) {
    node.forEach((item, i) => visit(walk, item, `${path}[${i}]`, scope, depth + 1));
    return;
  }
  if (!isObject(node)) return;
  // An object of several keys is not valid logic; each key is still walked as an operator, so nothing it might
  // read is missed.
  for (const [operator, args] of Object.entries(node)) {
    const argsPath = `${path}${segment(operator)}`;
    const list: unknown[] = Array.isArray(args) ? args : [args];
    switch (operator) {
      case 'preserve':
        break; // data, never evaluated
      case 'var':
        addName(walk, list[0], argsPath, scope, depth);
        if (list.length > 1) visit(walk, list.slice(1), argsPath, scope, depth + 1);
        break;
      case 'val':
        addSegments(walk, args, argsPath, scope, depth);
        break;
      case 'exists':
        addSegments(walk, args, argsPath, scope, depth, true);
        break;
      case 'missing':
        addNames(walk, args, argsPath, scope, depth);
        break;
      case 'missing_some':
        visit(walk, list[0], argsPath, scope, depth + 1);
        addNames(walk, list[1], argsPath, scope, depth);
        break;
      case 'eachKey':
        if (isObject(args)) for (const [key, value] of Object.entries(args)) visit(walk, value, `${argsPath}${segment(key)}`, scope, depth + 1);
        else visit(walk, args, argsPath, scope, depth + 1);
        break;
      default:
        if (RESCOPING.has(operator) && Array.isArray(args)) {
          // The first argument (and reduce's initial value) runs in this scope; the others in the item's.
          args.forEach((arg, i) => visit(walk, arg, `${argsPath}[${i}]`, i === 0 || (operator === 'reduce' && i === 2) ? scope : 'item', depth + 1));
        } else {
          visit(walk, args, argsPath, scope, depth + 1);
        }
    }
  }
}

/**
 * A `var` name: a literal path (`../` climbing out of an iterator to an outer scope, maybe the record), or computed.
 * `isPresence`: only whether the path holds a value is read (exists), which says nothing of what an object holds.
 */
function addName(walk: Walk, name: unknown, path: string, scope: Scope, depth = 0, isPresence = false): void {
  if (name === undefined || name === null || name === '') return add(walk, path, scope, [], isPresence);
  if (typeof name === 'number') return add(walk, path, scope, [String(name)], isPresence);
  if (typeof name !== 'string') {
    walk.out.push({ rule: walk.rule, path, kind: 'computed', segments: [] });
    visit(walk, name, path, scope, depth + 1);
    return;
  }
  let rest = name;
  let climbed = false;
  while (rest.startsWith('../')) {
    rest = rest.slice(3);
    climbed = true;
  }
  add(walk, path, climbed ? 'record' : scope, pathSegments(rest), isPresence);
}

/** `val` and `exists`: a name, or segments (a leading one-item array climbs scopes). */
function addSegments(walk: Walk, args: unknown, path: string, scope: Scope, depth: number, isPresence = false): void {
  if (!Array.isArray(args)) return addName(walk, args, path, scope, depth, isPresence);
  if (args.length === 1 && !Array.isArray(args[0])) return addName(walk, args[0], path, scope, depth, isPresence);
  let parts = args;
  let at = scope;
  if (Array.isArray(args[0]) && args[0].length === 1) {
    visit(walk, args[0], path, scope, depth + 1);
    parts = args.slice(1);
    at = 'record';
  }
  if (parts.some((part) => typeof part !== 'string' && typeof part !== 'number')) {
    walk.out.push({ rule: walk.rule, path, kind: 'computed', segments: [] });
    visit(walk, parts, path, scope, depth + 1);
    return;
  }
  add(walk, path, at, parts.map(String), isPresence);
}

/**
 * `missing` and `missing_some`: a list of names whose presence is read (a blank identifier is as masked as a filled
 * one, so naming one still counts; a whole event, whether the visit was entered, does not); a computed list reads any.
 */
function addNames(walk: Walk, names: unknown, path: string, scope: Scope, depth: number): void {
  if (typeof names === 'string') return add(walk, path, scope, pathSegments(names), true);
  if (!Array.isArray(names)) {
    if (names !== undefined && names !== null) {
      walk.out.push({ rule: walk.rule, path, kind: 'computed', segments: [] });
      visit(walk, names, path, scope, depth + 1);
    }
    return;
  }
  names.forEach((name, i) => {
    if (typeof name === 'string' || typeof name === 'number') add(walk, `${path}[${i}]`, scope, pathSegments(String(name)), true);
    else {
      walk.out.push({ rule: walk.rule, path: `${path}[${i}]`, kind: 'computed', segments: [] });
      visit(walk, name, `${path}[${i}]`, scope, depth + 1);
    }
  });
}

/**
 * A literal read. Of the record: no segment is the whole record, and a path ending at an event is the whole
 * visit. Of an iterator's item: the item comes from an expression walked on its own, so only the names matter
 * (an identifier's name, or an event's, still counts). A presence check of a whole object is not a read of it.
 */
function add(walk: Walk, path: string, scope: Scope, segments: string[], isPresence = false): void {
  const last = segments[segments.length - 1];
  const isWhole = !isPresence && (last === undefined ? scope === 'record' : walk.context.isEvent(last));
  walk.out.push({ rule: walk.rule, path, kind: isWhole ? 'whole' : 'field', segments });
}

function pathSegments(name: string): string[] {
  return splitPath(name).filter((part) => part !== '');
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function segment(key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}
