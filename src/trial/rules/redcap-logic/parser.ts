import type { ComparisonOperator, Node } from './ast.js';
import { syntaxError } from './syntax-error.js';
import { tokenize, type Token } from './tokenizer.js';

/**
 * Recursive descent over REDCap's grammar, loosest first: or, and, not, one comparison, + -, * /, unary minus.
 * Nesting is bounded so hostile logic cannot exhaust the stack; real rules nest a handful of levels.
 */
export const MAX_NESTING_DEPTH = 40;

const COMPARISONS: Readonly<Record<string, ComparisonOperator>> = { '=': '=', '<>': '<>', '!=': '<>', '<': '<', '<=': '<=', '>': '>', '>=': '>=' };

export function parseRedcapLogic(logic: string): Node {
  const parser = new Parser(tokenize(logic));
  const tree = parser.expression();
  const next = parser.peek();
  if (next.kind !== 'end') {
    if (next.kind === 'punct' && next.value === ')') throw syntaxError(`unexpected ")" at character ${next.position}: it closes no "("; remove it or add the missing "("`, next.position, { expected: 'end of logic' });
    throw syntaxError(`expected an operator (=, <>, <, and, or, +, ...) or the end of the logic at character ${next.position}, found ${describe(next)}`, next.position, { expected: 'operator or end' });
  }
  return tree;
}

class Parser {
  private index = 0;
  private depth = 0;
  private chainLength = 0;

  constructor(private readonly tokens: Token[]) {}

  peek(): Token {
    return this.tokens[this.index]!;
  }

  expression(): Node {
    this.depth += 1;
    if (this.depth > MAX_NESTING_DEPTH) {
      throw syntaxError(`nesting deeper than ${MAX_NESTING_DEPTH} levels at character ${this.peek().position}; simplify the logic or split it into several rules`, this.peek().position);
    }
    const node = this.or();
    this.depth -= 1;
    return node;
  }

  private or(): Node {
    return this.logical('or', () => this.and());
  }

  private and(): Node {
    return this.logical('and', () => this.not());
  }

  /** `a and b and c` as one node with three operands, as a person would write the JSON Logic. */
  private logical(keyword: 'and' | 'or', operand: () => Node): Node {
    const first = operand();
    const operands = [first];
    let position = 0;
    for (let token = this.peek(); isKeyword(token, keyword); token = this.peek()) {
      this.index += 1;
      position ||= token.position;
      operands.push(operand());
    }
    return operands.length === 1 ? first : { type: 'logical', operator: keyword, operands, position };
  }

  private not(): Node {
    const token = this.peek();
    if (!isKeyword(token, 'not')) return this.comparison();
    this.index += 1;
    return { type: 'not', operand: this.nested(() => this.not()), position: token.position };
  }

  private comparison(): Node {
    const left = this.additive();
    const token = this.peek();
    const operator = token.kind === 'operator' ? COMPARISONS[token.value] : undefined;
    if (!operator) return left;
    this.index += 1;
    return { type: 'compare', operator, left, right: this.additive(), position: token.position };
  }

  private additive(): Node {
    let left = this.multiplicative();
    for (let token = this.peek(); token.kind === 'operator' && (token.value === '+' || token.value === '-'); token = this.peek()) {
      this.index += 1;
      this.chainStep(token.position);
      left = { type: 'arithmetic', operator: token.value, left, right: this.multiplicative(), position: token.position };
    }
    return left;
  }

  private multiplicative(): Node {
    let left = this.unary();
    for (let token = this.peek(); token.kind === 'operator' && (token.value === '*' || token.value === '/'); token = this.peek()) {
      this.index += 1;
      this.chainStep(token.position);
      left = { type: 'arithmetic', operator: token.value, left, right: this.unary(), position: token.position };
    }
    return left;
  }

  private unary(): Node {
    const token = this.peek();
    if (token.kind === 'operator' && (token.value === '-' || token.value === '+')) {
      this.index += 1;
      const operand = this.nested(() => this.unary());
      return token.value === '-' ? { type: 'negate', operand, position: token.position } : operand;
    }
    return this.primary();
  }

  private primary(): Node {
    const token = this.peek();
    this.index += 1;
    switch (token.kind) {
      case 'number':
        return { type: 'number', value: token.value, position: token.position };
      case 'string':
        return { type: 'string', value: token.value, position: token.position };
      case 'ref':
        return { type: 'ref', path: refPath(token), text: token.text, position: token.position };
      case 'word': {
        const lower = token.value.toLowerCase();
        if (lower === 'true' || lower === 'false') return { type: 'boolean', value: lower === 'true', position: token.position };
        const open = this.peek();
        if (open.kind === 'punct' && open.value === '(') {
          this.index += 1;
          return { type: 'call', name: lower, args: this.nested(() => this.callArguments(token.value, open.position)), position: token.position };
        }
        throw syntaxError(`"${token.value}" at character ${token.position} is neither a function call nor a keyword; write fields in brackets ([${token.value}]) and text in quotes ('${token.value}')`, token.position, { expected: 'value' });
      }
      case 'punct':
        if (token.value === '(') {
          const inner = this.expression();
          this.expectClose(token.position);
          return inner;
        }
        break;
      default:
        break;
    }
    this.index -= 1;
    throw syntaxError(`expected a value ([field], a number, 'text', a function or "(") at character ${token.position}, found ${describe(token)}`, token.position, { expected: 'value' });
  }

  private callArguments(name: string, openPosition: number): Node[] {
    const args: Node[] = [];
    const first = this.peek();
    if (first.kind === 'punct' && first.value === ')') {
      this.index += 1;
      return args;
    }
    for (;;) {
      args.push(this.expression());
      const next = this.peek();
      if (next.kind === 'punct' && next.value === ',') {
        this.index += 1;
        continue;
      }
      if (next.kind !== 'punct' || next.value !== ')') {
        throw syntaxError(`expected "," or ")" in the arguments of ${name}( opened at character ${openPosition}, found ${describe(next)} at character ${next.position}`, next.position, { expected: '")"' });
      }
      this.index += 1;
      return args;
    }
  }

  private expectClose(openPosition: number): void {
    const token = this.peek();
    if (token.kind === 'punct' && token.value === ')') {
      this.index += 1;
      return;
    }
    throw syntaxError(`expected ")" to close the "(" at character ${openPosition}, found ${describe(token)} at character ${token.position}`, token.position, { expected: '")"', opened: openPosition });
  }

  /** `a + b + c` nests to the left, one level per operator, so a long chain counts towards the depth bound. */
  private chainStep(position: number): void {
    this.chainLength += 1;
    if (this.chainLength > MAX_NESTING_DEPTH * 4) {
      throw syntaxError(`more than ${MAX_NESTING_DEPTH * 4} arithmetic operators at character ${position}; use sum(...) or split the logic`, position);
    }
  }

  private nested<T>(parse: () => T): T {
    this.depth += 1;
    if (this.depth > MAX_NESTING_DEPTH) {
      throw syntaxError(`nesting deeper than ${MAX_NESTING_DEPTH} levels at character ${this.peek().position}; simplify the logic or split it into several rules`, this.peek().position);
    }
    const result = parse();
    this.depth -= 1;
    return result;
  }
}

/** Where the importer stores the value: events nest under their name; a checkbox choice is its own column. */
function refPath(token: Extract<Token, { kind: 'ref' }>): string {
  const path = token.names.join('.');
  if (token.checkboxCode === undefined) return path;
  // REDCap exports a choice as field___code, lower-cased, a leading "-" written as "m" (code -1: field___m1).
  const code = token.checkboxCode.toLowerCase();
  return `${path}___${code.startsWith('-') ? `m${code.slice(1)}` : code}`;
}

function isKeyword(token: Token, keyword: string): boolean {
  return token.kind === 'word' && token.value.toLowerCase() === keyword;
}

function describe(token: Token): string {
  switch (token.kind) {
    case 'end':
      return 'the end of the logic';
    case 'number':
      return `the number ${token.text}`;
    case 'string':
      return `the text '${token.value}'`;
    case 'ref':
      return token.text;
    case 'word':
      return `"${token.value}"`;
    default:
      return `"${token.value}"`;
  }
}
