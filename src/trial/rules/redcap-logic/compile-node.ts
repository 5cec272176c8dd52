import { isNumeric } from '../number-operators.js';
import type { ComparisonOperator, Node } from './ast.js';
import { compileCall } from './functions.js';
import { asCondition, asNumber, asText, eitherNaN, isBlank, settled, withNaN, type JsonLogic, type Operand } from './json-logic.js';

const JSON_COMPARISON: Readonly<Record<ComparisonOperator, string>> = { '=': '===', '<>': '!==', '<': '<', '<=': '<=', '>': '>', '>=': '>=' };

export function compileNode(node: Node): Operand {
  switch (node.type) {
    case 'number':
      return { logic: node.value, kind: 'number' };
    case 'string':
      // Numeric text in the logic ('18') compares as a number, as REDCap does.
      return { logic: node.value, kind: isNumeric(node.value) ? 'number' : 'text' };
    case 'boolean':
      return { logic: node.value, kind: 'boolean' };
    case 'ref':
      return { logic: { var: node.path }, kind: 'unknown', path: node.path };
    case 'compare':
      return { logic: compileComparison(node.operator, compileNode(node.left), compileNode(node.right)), kind: 'boolean' };
    case 'arithmetic': {
      const [left, right] = [compileNode(node.left), compileNode(node.right)];
      return withNaN({ logic: { [node.operator]: [left.logic, right.logic] }, kind: 'number' }, eitherNaN(left, right));
    }
    case 'negate': {
      const operand = compileNode(node.operand);
      return withNaN({ logic: { '-': [operand.logic] }, kind: 'number' }, operand.nanWhen);
    }
    case 'logical':
      return { logic: { [node.operator]: node.operands.map((part) => asCondition(settled(compileNode(part)))) }, kind: 'boolean' };
    case 'not':
      return { logic: { '!': asCondition(settled(compileNode(node.operand))) }, kind: 'boolean' };
    case 'call':
      return compileCall(node, compileNode);
  }
}

/**
 * REDCap's comparison (PHP 8's): numeric when both sides are numbers or numeric text, text otherwise, and
 * `= ''` tests for a blank. Which one is known at compile time for literals and arithmetic; for a field it is
 * decided on each record with `is_number`.
 */
function compileComparison(operator: ComparisonOperator, leftSide: Operand, rightSide: Operand): JsonLogic {
  // NaN (datediff of a blank date) equals nothing and is neither less nor greater: only `<>` holds.
  const nanWhen = eitherNaN(leftSide, rightSide);
  if (nanWhen !== undefined) {
    const compared = compileComparison(operator, { ...leftSide, nanWhen: undefined }, { ...rightSide, nanWhen: undefined });
    return { if: [nanWhen, operator === '<>', compared] };
  }
  const op = JSON_COMPARISON[operator];
  const [left, right] = [asComparable(leftSide), asComparable(rightSide)];
  if ((operator === '=' || operator === '<>') && (left.logic === '' || right.logic === '')) {
    const blank = isBlank(left.logic === '' ? right : left);
    return operator === '=' ? blank : { '!': blank };
  }
  if (left.kind === 'text' || right.kind === 'text') return { [op]: [asText(left), asText(right)] };
  if (left.kind === 'number' && right.kind === 'number') return { [op]: [asNumber(left), asNumber(right)] };
  if (isSimple(left) && isSimple(right)) return mixedComparison(op, left, right);
  // An operand computed by an operation is evaluated once: both are handed to the comparison as [left, right],
  // which is then its whole context, so a field is read as {"var": "0"} there too.
  const bound = (operand: Operand, index: number): Operand => (isLiteral(operand) ? operand : { logic: { var: String(index) }, kind: operand.kind });
  return { pipe: [[left.logic, right.logic], mixedComparison(op, bound(left, 0), bound(right, 1))] };
}

function mixedComparison(op: string, left: Operand, right: Operand): JsonLogic {
  const tests = [left, right].filter((operand) => operand.kind !== 'number').map((operand) => ({ is_number: operand.logic }));
  return { if: [tests.length === 1 ? tests[0]! : { and: tests }, { [op]: [asNumber(left), asNumber(right)] }, { [op]: [asText(left), asText(right)] }] };
}

/** A truth value compares as 1 or 0, as in REDCap (PHP): `isnumber([x]) = 1`. */
function asComparable(operand: Operand): Operand {
  return operand.kind === 'boolean' ? { logic: { if: [operand.logic, 1, 0] }, kind: 'number' } : operand;
}

/** A literal or a field: cheap to repeat in both branches of a comparison. */
function isSimple(operand: Operand): boolean {
  return operand.path !== undefined || isLiteral(operand);
}

function isLiteral(operand: Operand): boolean {
  return operand.logic === null || typeof operand.logic !== 'object';
}
