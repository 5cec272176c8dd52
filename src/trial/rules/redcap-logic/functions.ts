import type { Node } from './ast.js';
import { absolute, anyOf, asCondition, asNumber, asText, isBlank, settled, withNaN, type JsonLogic, type Operand } from './json-logic.js';
import { dateFormatOf, expectedDate, literalDateToIso, type DateFormat } from './literal-date.js';
import { syntaxError } from './syntax-error.js';

type Call = Extract<Node, { type: 'call' }>;
type Compile = (node: Node) => Operand;
type FunctionCompiler = (call: Call, compile: Compile) => Operand;

/**
 * REDCap's functions that the rule engine can express. Each keeps REDCap's meaning where it differs from JSON
 * Logic's: sum, min and max skip blank and non-numeric values, round goes half away from zero on the decimal digits.
 */
const FUNCTIONS: Readonly<Record<string, FunctionCompiler>> = {
  datediff: compileDatediff,
  sum: (call, compile) => ({ logic: numericFold(call, compile, { '+': [{ var: 'accumulator' }, { var: 'current' }] }, 0), kind: 'number' }),
  min: (call, compile) => ({ logic: numericFold(call, compile, extreme('<'), null), kind: 'unknown' }),
  max: (call, compile) => ({ logic: numericFold(call, compile, extreme('>'), null), kind: 'unknown' }),
  if: (call, compile) => {
    const [condition, then, otherwise] = argumentsOf(call, compile, 3, 3, 'if(condition, value if true, value if false)');
    return { logic: { if: [asCondition(condition!), then!.logic, otherwise!.logic] }, kind: then!.kind === otherwise!.kind ? then!.kind : 'unknown' };
  },
  round: rounding('half_away'),
  roundup: rounding('up'),
  rounddown: rounding('down'),
  abs: (call, compile) => {
    const [value] = argumentsOf(call, compile, 1, 1, 'abs(number)', { keepNaN: true });
    return withNaN({ logic: absolute(asNumber(value!)), kind: 'number' }, value!.nanWhen);
  },
  isnumber: (call, compile) => {
    const [value] = argumentsOf(call, compile, 1, 1, 'isnumber([field])');
    return { logic: { is_number: value!.logic }, kind: 'boolean' };
  },
  // Projects' missing data codes are not imported, so only a blank value counts here.
  isblankormissingcode: (call, compile) => {
    const [value] = argumentsOf(call, compile, 1, 1, 'isblankormissingcode([field])');
    return { logic: isBlank(value!), kind: 'boolean' };
  },
  contains: (call, compile) => textSearch(call, compile, (needle) => needle),
  not_contain: (call, compile) => {
    const found = textSearch(call, compile, (needle) => needle);
    return { logic: { '!': found.logic }, kind: 'boolean' };
  },
  starts_with: (call, compile) => textSearch(call, compile, (needle) => `^${needle}`),
  ends_with: (call, compile) => textSearch(call, compile, (needle) => `${needle}$`),
};

/** Functions REDCap has that a stored-record rule cannot run, with the reason the author is told. */
const REFUSED: Readonly<Record<string, string>> = {
  today: 'a rule over stored records must give the same answer whenever it runs; compare with a date field or a fixed date',
  now: 'a rule over stored records must give the same answer whenever it runs; compare with a date field or a fixed date',
};

export const SUPPORTED_FUNCTIONS: readonly string[] = Object.keys(FUNCTIONS).sort();

export function compileCall(call: Call, compile: Compile): Operand {
  const compiler = Object.hasOwn(FUNCTIONS, call.name) ? FUNCTIONS[call.name] : undefined;
  if (compiler) return compiler(call, compile);
  const reason = Object.hasOwn(REFUSED, call.name) ? REFUSED[call.name] : `supported functions: ${SUPPORTED_FUNCTIONS.join(', ')}`;
  throw syntaxError(`function "${call.name}" at character ${call.position} is not supported; ${reason}`, call.position, { function: call.name });
}

const DAYS_PER_UNIT: Readonly<Record<string, number>> = { d: 1, M: 30.44, y: 365.2425 };

/**
 * datediff(date1, date2, unit[, format][, signed]): date2 − date1, as an absolute value unless signed is true.
 * Days are whole calendar days (the engine's date_diff_days); months and years are days / 30.44 and
 * / 365.2425 as in REDCap. The format ("ymd" when left out) is how a date written in the logic reads, as in
 * REDCap: datediff([d1], "01-11-2024", "d", "mdy") is to 11 January; stored values are always Y-M-D.
 * A blank date gives REDCap's NaN (`nanWhen`), so `datediff([a],[b],"d") > 30` does not flag a record without
 * both dates, as in REDCap; a date that is filled but not a date is still an error finding, for a person to see.
 */
function compileDatediff(call: Call, compile: Compile): Operand {
  const usage = 'datediff([date1], [date2], "d"|"M"|"y"[, "ymd"|"mdy"|"dmy"][, true])';
  const args = argumentsOf(call, compile, 3, 5, usage);
  for (const date of args.slice(0, 2)) {
    const text = typeof date.logic === 'string' ? date.logic.toLowerCase() : '';
    if (text === 'today' || text === 'now') {
      throw syntaxError(`datediff with "${text}" at character ${call.position} is not supported: ${REFUSED.today}`, call.position, { function: 'datediff' });
    }
  }
  const unit = args[2]!.logic;
  if (typeof unit !== 'string' || !Object.hasOwn(DAYS_PER_UNIT, unit)) {
    const timeUnit = unit === 'h' || unit === 'm' || unit === 's';
    const problem = timeUnit
      ? `unit "${unit}" needs the time of day, and the engine counts whole calendar days`
      : `the unit must be "d", "M" or "y", got ${JSON.stringify(unit)}`;
    throw syntaxError(`datediff at character ${call.position}: ${problem}; write ${usage}`, call.position, { function: 'datediff' });
  }
  let signed = false;
  let format: DateFormat = 'ymd';
  for (const [offset, option] of args.slice(3).entries()) {
    const named = offset === 0 && typeof option.logic === 'string' ? dateFormatOf(option.logic) : undefined;
    if (typeof option.logic === 'boolean') signed = option.logic;
    else if (named !== undefined) format = named;
    else throw syntaxError(`datediff at character ${call.position}: argument ${offset + 4} must be a date format ("ymd", "mdy", "dmy") or true/false; write ${usage}`, call.position, { function: 'datediff' });
  }
  const dates = args.slice(0, 2).map((date, index) => {
    if (typeof date.logic !== 'string') return date.logic;
    const iso = literalDateToIso(date.logic, format);
    if (iso === undefined) {
      throw syntaxError(`datediff at character ${call.position}: argument ${index + 1} ${JSON.stringify(date.logic)} is not a date in the "${format}" format; write it as ${expectedDate(format)}`, call.position, { function: 'datediff' });
    }
    return iso;
  });
  const days: JsonLogic = { date_diff_days: dates };
  const magnitude = signed ? days : absolute(days);
  const perUnit = DAYS_PER_UNIT[unit]!;
  // A literal date is never blank; a field (or a computed date) may be.
  const blankDates = args.slice(0, 2).filter((date) => typeof date.logic === 'object' && date.logic !== null).map(isBlank);
  return withNaN({ logic: perUnit === 1 ? magnitude : { '/': [magnitude, perUnit] }, kind: 'number' }, anyOf(blankDates));
}

/**
 * round, roundup and rounddown(number[, decimals]): on the number's decimal digits with the engine's
 * `decimal_round`, as REDCap (PHP) rounds what a person typed: round(1.005, 2) is 1.01, half away from zero;
 * roundup and rounddown go towards +∞ and −∞ (PHP's ceil and floor). JSON Logic has no rounding, and binary
 * arithmetic (1.005 * 100 = 100.49999999999999) would give 1.
 */
function rounding(mode: 'half_away' | 'up' | 'down'): FunctionCompiler {
  return (call, compile) => {
    const [value, places] = argumentsOf(call, compile, 1, 2, `${call.name}(number, decimals)`, { keepNaN: true });
    const decimals = places === undefined ? 0 : places.logic;
    if (typeof decimals !== 'number' || !Number.isInteger(decimals) || decimals < 0 || decimals > 10) {
      throw syntaxError(`${call.name} at character ${call.position}: decimals must be a whole number from 0 to 10, got ${JSON.stringify(decimals)}`, call.position, { function: call.name });
    }
    return withNaN({ logic: { decimal_round: [asNumber(value!), decimals, mode] }, kind: 'number' }, value!.nanWhen);
  };
}

/** Folds the numeric arguments (blank and non-numeric ones skipped, as REDCap does) with `step`. */
function numericFold(call: Call, compile: Compile, step: JsonLogic, initial: JsonLogic): JsonLogic {
  const args = argumentsOf(call, compile, 1, Number.POSITIVE_INFINITY, `${call.name}([a], [b], ...)`);
  return { reduce: [{ filter: [args.map((arg) => arg.logic), { is_number: { var: '' } }] }, step, initial] };
}

function extreme(comparison: '<' | '>'): JsonLogic {
  const current = { '+': [{ var: 'current' }] };
  return { if: [{ or: [{ '===': [{ var: 'accumulator' }, null] }, { [comparison]: [current, { var: 'accumulator' }] }] }, current, { var: 'accumulator' }] };
}

/**
 * contains / starts_with / ends_with(text, 'part'): REDCap compares without regard to case, which JSON Logic
 * can only do through `matches` (linear-time RE2) with the `i` flag, so the part must be written in the logic.
 */
function textSearch(call: Call, compile: Compile, anchor: (escaped: string) => string): Operand {
  const [haystack, needle] = argumentsOf(call, compile, 2, 2, `${call.name}([field], 'text')`);
  if (typeof needle!.logic !== 'string' && typeof needle!.logic !== 'number') {
    throw syntaxError(`${call.name} at character ${call.position}: the text to look for must be written in quotes, not taken from a field`, call.position, { function: call.name });
  }
  const part = String(needle!.logic);
  if (part === '') return { logic: true, kind: 'boolean' };
  return { logic: { matches: [asText(haystack!), anchor(escapeRegExp(part)), 'i'] }, kind: 'boolean' };
}

function escapeRegExp(text: string): string {
  let escaped = '';
  for (const char of text) escaped += '\\^$.|?*+()[]{}'.includes(char) ? `\\${char}` : char;
  return escaped;
}

/** The compiled arguments; REDCap's NaN is settled to blank unless the function computes with it (keepNaN). */
function argumentsOf(call: Call, compile: Compile, min: number, max: number, usage: string, options: { keepNaN?: boolean } = {}): Operand[] {
  if (call.args.length < min || call.args.length > max) {
    const expected = min === max ? `${min}` : max === Number.POSITIVE_INFINITY ? `at least ${min}` : `${min} to ${max}`;
    throw syntaxError(`${call.name} at character ${call.position} takes ${expected} arguments, got ${call.args.length}; write ${usage}`, call.position, { function: call.name });
  }
  const operands = call.args.map(compile);
  return options.keepNaN ? operands : operands.map(settled);
}
