import { isMap, isPair, isScalar, isSeq, parseDocument, type Document, type Node as YamlNode } from 'yaml';

/** Where in the text a problem is: 1-based line, and the character range to underline (offsets into the text). */
export interface ProblemSpan {
  line: number;
  from: number;
  to: number;
}

const LINE_COLUMN = /^line (\d+)(?:, column (\d+))?$/;

/** Offsets of the start of each line, so an offset becomes a line by binary search and a line an offset directly. */
function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === '\n') starts.push(i + 1);
  return starts;
}

function lineOf(starts: number[], offset: number): number {
  let low = 0;
  let high = starts.length - 1;
  while (low < high) {
    const mid = (low + high + 1) >> 1;
    if (starts[mid]! <= offset) low = mid;
    else high = mid - 1;
  }
  return low + 1;
}

function lineEnd(text: string, starts: number[], line: number): number {
  const next = starts[line];
  return next === undefined ? text.length : next - 1;
}

/** `nodes.checks.rules[2].logic.and[0].var` as keys and indexes; a dotted name stays in parts for the walk to rejoin. */
function segments(path: string): Array<string | number> {
  const parts: Array<string | number> = [];
  for (const token of path.split('.')) {
    const match = /^([^[\]]*)((?:\[\d+\])*)$/.exec(token);
    if (!match) return parts;
    if (match[1]) parts.push(match[1]);
    for (const index of match[2]!.matchAll(/\[(\d+)\]/g)) parts.push(Number(index[1]));
  }
  return parts;
}

/**
 * The deepest node of the YAML that the path names. Keys may themselves hold dots (a REDCap `event.field`), so at a
 * map the walk tries the longest run of parts that is a key. Where the path goes further than the text (a problem
 * about a missing key), the last node reached is the place to mark.
 */
function deepestNode(root: YamlNode, parts: Array<string | number>): { node: YamlNode; key: YamlNode | null } {
  let node = root;
  let key: YamlNode | null = null;
  let i = 0;
  while (i < parts.length) {
    const part = parts[i]!;
    if (isSeq(node) && typeof part === 'number') {
      const item = node.items[part];
      if (!item || !('range' in (item as object))) break;
      node = item as YamlNode;
      key = null;
      i += 1;
      continue;
    }
    if (!isMap(node)) break;
    const map = node;
    let matched = false;
    for (let end = parts.length; end > i && !matched; end--) {
      const name = parts.slice(i, end).join('.');
      const pair = map.items.find((candidate) => isPair(candidate) && isScalar(candidate.key) && String(candidate.key.value) === name);
      if (!pair || !isPair(pair)) continue;
      key = pair.key as YamlNode;
      node = (pair.value as YamlNode | null) ?? key;
      i = end;
      matched = true;
    }
    if (!matched) break;
  }
  return { node, key };
}

/**
 * The line and span of each problem the server names by path (`nodes.checks.rules[2].logic`) or by line and column
 * (`line 38, column 3`, for YAML that cannot be read), in the text it validated; null for a problem about the whole
 * skill, or text too broken to walk. The text is read once for them all: the problem list asks again on every
 * keystroke, and a skill may have dozens of problems.
 */
export function problemSpans(text: string, paths: readonly string[]): Array<ProblemSpan | null> {
  const starts = lineStarts(text);
  let document: Document | null | undefined;
  const read = (): Document | null => {
    if (document === undefined) {
      try {
        const parsed = parseDocument(text, { uniqueKeys: false });
        document = parsed.errors.length || !parsed.contents ? null : parsed;
      } catch {
        document = null;
      }
    }
    return document;
  };
  return paths.map((path) => spanOf(text, starts, path, read));
}

/** The span of one problem (see problemSpans). */
export function problemSpan(text: string, path: string): ProblemSpan | null {
  return problemSpans(text, [path])[0] ?? null;
}

function spanOf(text: string, starts: number[], path: string, read: () => Document | null): ProblemSpan | null {
  const position = LINE_COLUMN.exec(path);
  if (position) {
    const line = Math.min(Number(position[1]), starts.length);
    const start = starts[line - 1]!;
    const end = lineEnd(text, starts, line);
    const from = position[2] ? Math.min(start + Number(position[2]) - 1, end) : start;
    return { line, from, to: Math.max(end, from) };
  }
  const parts = segments(path);
  if (!parts.length) return null;
  const document = read();
  if (!document) return null;
  const { node, key } = deepestNode(document.contents as YamlNode, parts);
  if (node === document.contents) return null;
  // A rule or a node is marked at its first line (its key, or the `-` item's first key), not over every line it spans.
  const from = (key ?? node).range?.[0] ?? 0;
  const line = lineOf(starts, from);
  const end = node.range?.[1] ?? from;
  return { line, from, to: Math.max(from, Math.min(end, lineEnd(text, starts, line))) };
}
