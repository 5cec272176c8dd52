import { syntaxError } from './syntax-error.js';

/**
 * Splits REDCap logic into tokens in one pass, character by character (no regular expressions, so no input
 * can make it backtrack). Positions are 1-based characters, as an editor shows them.
 */

export type Token =
  | { kind: 'number'; value: number; text: string; position: number }
  | { kind: 'string'; value: string; position: number }
  | { kind: 'ref'; names: string[]; checkboxCode?: string; text: string; position: number }
  | { kind: 'word'; value: string; position: number }
  | { kind: 'operator'; value: Operator; position: number }
  | { kind: 'punct'; value: '(' | ')' | ','; position: number }
  | { kind: 'end'; position: number };

export type Operator = '=' | '<>' | '!=' | '<' | '<=' | '>' | '>=' | '+' | '-' | '*' | '/';

/** Logic longer than this is refused: REDCap rules are a few hundred characters; this bounds the work per rule. */
export const MAX_LOGIC_LENGTH = 20_000;

export function tokenize(logic: string): Token[] {
  if (logic.length > MAX_LOGIC_LENGTH) {
    throw syntaxError(`the logic is ${logic.length} characters, over the ${MAX_LOGIC_LENGTH}-character limit; split it into several rules`, 1);
  }
  const tokens: Token[] = [];
  let i = 0;
  while (i < logic.length) {
    const char = logic[i]!;
    const position = i + 1;
    if (isSpace(char)) {
      i += 1;
    } else if (char === '[') {
      const ref = readRef(logic, i);
      tokens.push(ref.token);
      i = ref.end;
    } else if (char === "'" || char === '"') {
      const close = logic.indexOf(char, i + 1);
      if (close === -1) throw syntaxError(`the text opened with ${char} at character ${position} is never closed; add the closing ${char}`, position);
      tokens.push({ kind: 'string', value: logic.slice(i + 1, close), position });
      i = close + 1;
    } else if (isDigit(char) || (char === '.' && isDigit(logic[i + 1] ?? ''))) {
      let end = i;
      while (end < logic.length && isDigit(logic[end]!)) end += 1;
      if (logic[end] === '.') {
        end += 1;
        while (end < logic.length && isDigit(logic[end]!)) end += 1;
      }
      const text = logic.slice(i, end);
      tokens.push({ kind: 'number', value: Number(text), text, position });
      i = end;
    } else if (isWordStart(char)) {
      let end = i;
      while (end < logic.length && isWordPart(logic[end]!)) end += 1;
      tokens.push({ kind: 'word', value: logic.slice(i, end), position });
      i = end;
    } else if (char === '(' || char === ')' || char === ',') {
      tokens.push({ kind: 'punct', value: char, position });
      i += 1;
    } else {
      const two = logic.slice(i, i + 2);
      if (two === '<>' || two === '!=' || two === '<=' || two === '>=') {
        tokens.push({ kind: 'operator', value: two, position });
        i += 2;
      } else if (char === '=' || char === '<' || char === '>' || char === '+' || char === '-' || char === '*' || char === '/') {
        tokens.push({ kind: 'operator', value: char, position });
        i += 1;
      } else {
        throw syntaxError(`unexpected ${JSON.stringify(char)} at character ${position}; REDCap logic uses [field], numbers, 'text', = <> < <= > >=, + - * /, and, or, not and functions`, position);
      }
    }
  }
  tokens.push({ kind: 'end', position: logic.length + 1 });
  return tokens;
}

/**
 * `[field]`, `[event][field]`, `[field(code)]` (a checkbox choice) and `[event][field(code)]`. Smart variables
 * (`[event-name]`, `[record-dag-name]`) and repeating instances (`[field][2]`) depend on where REDCap shows the
 * logic, which a rule run over stored records does not have, so they are refused by name.
 */
function readRef(logic: string, start: number): { token: Token; end: number } {
  const names: string[] = [];
  let checkboxCode: string | undefined;
  let i = start;
  while (logic[i] === '[') {
    const close = logic.indexOf(']', i + 1);
    if (close === -1) throw syntaxError(`the "[" at character ${i + 1} is never closed; add "]"`, i + 1);
    let inner = logic.slice(i + 1, close);
    if (checkboxCode !== undefined) throw syntaxError(`a checkbox choice [field(code)] must be the last part of a reference (character ${i + 1})`, i + 1);
    const open = inner.indexOf('(');
    if (open !== -1 && inner.endsWith(')')) {
      checkboxCode = inner.slice(open + 1, -1);
      inner = inner.slice(0, open);
      if (!isCheckboxCode(checkboxCode)) {
        throw syntaxError(`"${checkboxCode}" at character ${i + 2 + open} is not a checkbox choice code; codes are letters, digits, "_" or a leading "-"`, i + 2 + open);
      }
    }
    if (!isName(inner)) {
      const what = inner.includes('-') || inner.includes(':') ? `smart variable [${inner}] is not supported` : `[${inner}] is not a field or event name`;
      throw syntaxError(`${what} (character ${i + 1}); write [field], [event][field] or [field(code)] with lower-case letters, digits and "_"`, i + 1);
    }
    names.push(inner);
    i = close + 1;
    if (names.length > 2) throw syntaxError(`a reference has at most two parts, [event][field] (character ${start + 1})`, start + 1);
  }
  if (names.length === 2 && [...names[1]!].every(isDigit)) {
    throw syntaxError(`repeating instance [${names[1]}] after [${names[0]}] is not supported (character ${start + 1}); rules run on each stored event row`, start + 1);
  }
  return { token: { kind: 'ref', names, ...(checkboxCode === undefined ? {} : { checkboxCode }), text: logic.slice(start, i), position: start + 1 }, end: i };
}

function isName(text: string): boolean {
  if (text === '') return false;
  for (const char of text) if (!isWordPart(char)) return false;
  return true;
}

function isCheckboxCode(text: string): boolean {
  const body = text.startsWith('-') ? text.slice(1) : text;
  return isName(body);
}

function isSpace(char: string): boolean {
  return char === ' ' || char === '\t' || char === '\n' || char === '\r';
}

function isDigit(char: string): boolean {
  return char >= '0' && char <= '9';
}

function isWordStart(char: string): boolean {
  return (char >= 'a' && char <= 'z') || (char >= 'A' && char <= 'Z') || char === '_';
}

function isWordPart(char: string): boolean {
  return isWordStart(char) || isDigit(char);
}
