/**
 * How deep objects and arrays may sit inside each other in anything a client sends: a JSON body, a skill's YAML.
 * Code that walks such values (schema validation, rule compilers, JSON logic, audit diffs) recurses, and 5 000
 * levels overflowed the stack and answered 500. The deepest body we accept in practice (a skill definition with
 * nested rule logic) is about 20 levels; 64 leaves room and is far below any stack limit.
 */
export const MAX_NESTING_DEPTH = 64;

interface TooDeep {
  /** Where the limit was passed, as `<root>.a.b[0]` (keys cut to 30 characters, the path to its first 10 steps). */
  path: string;
  limit: number;
}

const KEY_CHARS_SHOWN = 30;
const STEPS_SHOWN = 10;

/**
 * The first place `value` nests deeper than `limit` (objects and arrays count one level each, the root is level 1),
 * or undefined. Iterative, so a value of any depth is measured without recursion.
 */
export function findTooDeep(value: unknown, root: string, limit = MAX_NESTING_DEPTH): TooDeep | undefined {
  const stack: Array<{ value: unknown; depth: number; steps: string[] }> = [{ value, depth: 1, steps: [] }];
  while (stack.length) {
    const { value: current, depth, steps } = stack.pop()!;
    if (current === null || typeof current !== 'object' || Buffer.isBuffer(current)) continue;
    if (depth > limit) return { path: pathOf(root, steps), limit };
    const entries: Array<[string, unknown]> = Array.isArray(current) ? current.map((item, i) => [`[${i}]`, item]) : Object.entries(current).map(([key, item]) => [`.${key.length > KEY_CHARS_SHOWN ? `${key.slice(0, KEY_CHARS_SHOWN)}…` : key}`, item]);
    for (const [step, item] of entries) {
      if (item !== null && typeof item === 'object') stack.push({ value: item, depth: depth + 1, steps: steps.length < STEPS_SHOWN ? [...steps, step] : steps });
    }
  }
  return undefined;
}

function pathOf(root: string, steps: string[]): string {
  return `${root}${steps.join('')}${steps.length >= STEPS_SHOWN ? '…' : ''}`;
}

/** The sentence a refusal says: where, the limit, and what to do. */
export function tooDeepMessage(what: string, found: TooDeep): string {
  return `${what} nests objects and arrays more than ${found.limit} levels deep (at ${found.path}); ClinAgent accepts at most ${found.limit}. Send the data flatter: no field of any request needs that depth.`;
}
