import { parseDocument, stringify } from 'yaml';
import { findTooDeep, tooDeepMessage } from '../../core/nesting-depth.js';
import type { SkillProblem } from './skill-problem.js';

/** A skill as a request carries it: the YAML an author wrote, or the definition as an object. */
export type SkillSourceInput = { yaml: string; definition?: undefined } | { definition: Record<string, unknown>; yaml?: undefined };

type ReadSkillSource = { definition: Record<string, unknown>; sourceYaml: string; problems?: undefined } | { definition?: undefined; problems: SkillProblem[] };

/**
 * The definition and the YAML to keep for the editor. YAML that cannot be read is reported by line and column;
 * a definition sent as an object gets YAML written for it, so every version can be shown and edited as YAML.
 */
export function readSkillSource(input: SkillSourceInput): ReadSkillSource {
  if (input.definition !== undefined) return { definition: input.definition, sourceYaml: stringify(input.definition, { lineWidth: 0 }) };
  let definition: unknown;
  try {
    const document = parseDocument(input.yaml, { prettyErrors: true, uniqueKeys: true });
    if (document.errors.length) {
      return { problems: document.errors.map((error) => ({ path: error.linePos ? `line ${error.linePos[0].line}, column ${error.linePos[0].col}` : '(yaml)', message: readableYamlError(error.message) })) };
    }
    definition = document.toJS({ maxAliasCount: 100 });
  } catch (error) {
    // The parser's own refusals (an alias bomb: "Excessive alias count", nesting deeper than it can follow) are
    // the author's problem to fix, answered as such, never a 500.
    return { problems: [{ path: '(yaml)', message: yamlRefusal(error) }] };
  }
  const tooDeep = findTooDeep(definition, '(skill)');
  if (tooDeep) return { problems: [{ path: tooDeep.path, message: tooDeepMessage('The skill', tooDeep) }] };
  if (definition === null || typeof definition !== 'object' || Array.isArray(definition)) {
    return { problems: [{ path: '(skill)', message: 'the YAML must be a mapping with id, name, start_node and nodes (see the shipped skills/ for an example)' }] };
  }
  return { definition: definition as Record<string, unknown>, sourceYaml: input.yaml };
}

/** The parser reports running out of stack as "Maximum call stack size exceeded"; the author needs to know why. */
function readableYamlError(message: string): string {
  return /maximum call stack/i.test(message) ? TOO_DEEP_YAML : firstLine(message);
}

const TOO_DEEP_YAML = 'the YAML nests deeper than it can be read; a skill needs a few levels, keep it flatter';

function yamlRefusal(error: unknown): string {
  if (error instanceof RangeError) return TOO_DEEP_YAML;
  const message = error instanceof Error ? firstLine(error.message) : String(error);
  if (/alias/i.test(message)) return `the YAML repeats aliases (*name) more than 100 times, which could expand it without bound (${message}); write the values out or use fewer aliases`;
  return `the YAML cannot be read: ${message}`;
}

function firstLine(message: string): string {
  return message.split('\n')[0]!;
}
