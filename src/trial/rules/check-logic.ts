import { splitPath } from 'json-logic-engine';
import type { RuleEngine } from './rule-engine.js';

/**
 * Static checks of one JSON Logic expression before it is compiled: unknown operators, variables that name
 * no known field, and clinical-operator arguments that can never work. Every problem is reported with its
 * path, because json-logic-engine stops at the first unknown operator and does not say where it was.
 */
export interface LogicProblem {
  /** Where in the rule, e.g. `logic.and[1]["<="][0]`. */
  path: string;
  message: string;
  kind: 'operator' | 'variable' | 'argument';
}

/** Operators whose later arguments run with another context (array item, previous step, caught error). */
const RESCOPING_OPERATORS = new Set(['map', 'filter', 'reduce', 'all', 'some', 'none', 'every', 'pipe', 'try']);

/** Operators whose arguments name record fields. */
const FIELD_OPERATORS = new Set(['var', 'val', 'exists', 'missing', 'missing_some']);

interface Walk {
  engine: RuleEngine;
  knownFields?: ReadonlySet<string>;
  problems: LogicProblem[];
  /** Every field name the expression reads, whole (`event.field`), with where it is read. */
  references?: FieldReference[];
}

/** A field name an expression reads (`var`, `val`, `exists`, `missing`, `missing_some`), whole, and where. */
interface FieldReference {
  path: string;
  name: string;
}

export function checkLogic(logic: unknown, engine: RuleEngine, knownFields?: ReadonlySet<string>, root = 'logic'): LogicProblem[] {
  const walk: Walk = { engine, knownFields, problems: [] };
  visit(walk, logic, root, false);
  return walk.problems;
}

/**
 * The field names an expression reads, as written (`v2_arm_1.sbp`), each with its path; names computed at run time
 * and names inside an iterator (which name an item's fields) are left out, as checkLogic leaves them unchecked.
 */
export function logicFieldReferences(logic: unknown, engine: RuleEngine, root = 'logic'): FieldReference[] {
  const walk: Walk = { engine, problems: [], references: [] };
  visit(walk, logic, root, false);
  return walk.references!;
}

function visit(walk: Walk, node: unknown, path: string, isRescoped: boolean): void {
  if (Array.isArray(node)) {
    node.forEach((item, i) => visit(walk, item, `${path}[${i}]`, isRescoped));
    return;
  }
  if (node === null || typeof node !== 'object') return;
  const keys = Object.keys(node);
  if (keys.length === 0) return;
  if (keys.length > 1) {
    walk.problems.push({
      path,
      kind: 'operator',
      message: `an operation has exactly one operator key, found ${keys.length} (${keys.join(', ')}); wrap a literal object in {"preserve": ...}`,
    });
    return;
  }
  const operator = keys[0]!;
  const args = (node as Record<string, unknown>)[operator];
  const argsPath = `${path}${segment(operator)}`;
  if (!walk.engine.operatorNames.includes(operator)) {
    walk.problems.push({ path, kind: 'operator', message: `unknown operator "${operator}"` });
    return;
  }
  if (operator === 'preserve') return; // its argument is data, never evaluated
  if (FIELD_OPERATORS.has(operator) && walk.knownFields && !isRescoped) checkFields(walk, operator, args, argsPath);
  if (FIELD_OPERATORS.has(operator) && walk.references && !isRescoped) walk.references.push(...fieldNames(operator, args).map(({ name }) => ({ path: argsPath, name })));

  const clinical = walk.engine.clinicalOperators.get(operator);
  if (clinical) {
    for (const message of clinical.checkArgs(Array.isArray(args) ? args : [args])) walk.problems.push({ path: argsPath, kind: 'argument', message });
  }

  if (operator === 'eachKey' && args !== null && typeof args === 'object' && !Array.isArray(args)) {
    for (const [key, value] of Object.entries(args)) visit(walk, value, `${argsPath}${segment(key)}`, isRescoped);
  } else if (RESCOPING_OPERATORS.has(operator) && Array.isArray(args)) {
    // Inside an iterator `var` names a field of the item, not of the record, so field checks stop there.
    args.forEach((arg, i) => visit(walk, arg, `${argsPath}[${i}]`, isRescoped || i > 0));
  } else {
    visit(walk, args, argsPath, isRescoped);
  }
}

/** Reports field names (first path segment) that are not in knownFields; computed names cannot be checked. */
function checkFields(walk: Walk, operator: string, args: unknown, path: string): void {
  for (const { first } of fieldNames(operator, args)) {
    if (!walk.knownFields!.has(first)) walk.problems.push({ path, kind: 'variable', message: `unknown variable "${first}"` });
  }
}

/** Each name read: whole (`v2_arm_1.sbp`, or `val`'s segments joined by dots) and its first segment. */
function fieldNames(operator: string, args: unknown): Array<{ name: string; first: string }> {
  const list = Array.isArray(args) ? args : [args];
  const dotted = (name: string) => ({ name, first: firstSegment(name) });
  switch (operator) {
    case 'var': {
      const key = list[0];
      if (typeof key === 'number') return [{ name: String(key), first: String(key) }];
      if (typeof key !== 'string' || key === '' || key.startsWith('../')) return [];
      const first = splitPath(key)[0];
      return first === undefined || first === '' ? [] : [{ name: key, first }];
    }
    case 'val':
    case 'exists': {
      // {"val": "a"} or {"val": ["a", "b"]} (segments, not a dotted path); a leading [n] climbs scopes and is not a field.
      const first = list[0];
      if (typeof first !== 'string' && typeof first !== 'number') return [];
      const segments = list.every((part) => typeof part === 'string' || typeof part === 'number') ? list.map(String) : [String(first)];
      return [{ name: segments.join('.'), first: String(first) }];
    }
    case 'missing':
      return list.filter((name): name is string => typeof name === 'string' && name !== '').map(dotted);
    case 'missing_some': {
      const names = list[1];
      return Array.isArray(names) ? names.filter((name): name is string => typeof name === 'string' && name !== '').map(dotted) : [];
    }
    default:
      return [];
  }
}

function firstSegment(path: string): string {
  return splitPath(path)[0] ?? path;
}

function segment(key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}
