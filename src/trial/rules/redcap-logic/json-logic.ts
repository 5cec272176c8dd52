/** JSON Logic as this compiler builds it, and the small pieces every part of it needs. */
export type JsonLogic = null | boolean | number | string | JsonLogic[] | { [operator: string]: JsonLogic };

/**
 * What a compiled operand yields, as far as the compiler can tell: REDCap compares numerically only when both
 * sides are numbers, so a literal or an arithmetic result settles it at compile time and a field is tested
 * when the rule runs.
 */
export type Kind = 'number' | 'text' | 'boolean' | 'unknown';

export interface Operand {
  logic: JsonLogic;
  kind: Kind;
  /** Set for a field reference: the record path, for `missing` and the blank default. */
  path?: string;
  /**
   * When this holds, the value is REDCap's NaN (datediff of a blank date), which JSON Logic cannot carry: the
   * logic must not be evaluated then. Arithmetic passes it on, a comparison with it is false (`<>` true), and
   * anything else takes it as blank (settled).
   */
  nanWhen?: JsonLogic;
}

/** When any of the operands is NaN, for operands combined by arithmetic or compared. */
export function eitherNaN(...operands: Operand[]): JsonLogic | undefined {
  return anyOf(operands.flatMap((operand) => (operand.nanWhen === undefined ? [] : [operand.nanWhen])));
}

/** `conditions` joined by `or`; undefined for none. */
export function anyOf(conditions: JsonLogic[]): JsonLogic | undefined {
  return conditions.length === 0 ? undefined : conditions.length === 1 ? conditions[0] : { or: conditions };
}

export function withNaN(operand: Operand, nanWhen: JsonLogic | undefined): Operand {
  return nanWhen === undefined ? operand : { ...operand, nanWhen };
}

/** The operand with REDCap's NaN given as blank (null), for a context that does not compare or compute with it. */
export function settled(operand: Operand): Operand {
  if (operand.nanWhen === undefined) return operand;
  return { logic: { if: [operand.nanWhen, null, operand.logic] }, kind: 'unknown' };
}

/** The value as a number; a numeric literal or a numeric result stays as it is. */
export function asNumber(operand: Operand): JsonLogic {
  if (typeof operand.logic === 'string' && operand.kind === 'number') return Number(operand.logic.trim());
  return operand.kind === 'number' ? operand.logic : { '+': [operand.logic] };
}

/** The value as REDCap's text: a blank (absent, null) is '' and a number its decimal text. */
export function asText(operand: Operand): JsonLogic {
  if (typeof operand.logic === 'string') return operand.logic;
  if (typeof operand.logic === 'number') return String(operand.logic);
  if (operand.path !== undefined) return { cat: [{ var: [operand.path, ''] }] };
  return { cat: [{ '??': [operand.logic, ''] }] };
}

/**
 * REDCap's (PHP's) truth: blank, 0 and "0" are false. JSON Logic would take the text "0" (an unticked
 * checkbox) as true, so a value used as a condition is tested explicitly.
 */
export function asCondition(operand: Operand): JsonLogic {
  if (operand.kind === 'boolean') return operand.logic;
  return { '!': { in: [operand.logic, ['', '0', 0, null, false]] } };
}

/** Blank as REDCap means it (`[x] = ''`): the engine's `missing` for a field, empty text otherwise. */
export function isBlank(operand: Operand): JsonLogic {
  return operand.path !== undefined ? { '!!': { missing: [operand.path] } } : { '===': [asText(operand), ''] };
}

/** |x| evaluating x once: `pipe` hands its value to the next step as the context (`{"var": ""}`). */
export function absolute(logic: JsonLogic): JsonLogic {
  return { pipe: [logic, { if: [{ '<': [{ var: '' }, 0] }, { '-': [{ var: '' }] }, { var: '' }] }] };
}
