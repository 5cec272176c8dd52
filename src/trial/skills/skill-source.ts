import { parseDocument, stringify } from 'yaml';
import type { SkillProblem } from './skill-problem.js';

/** A skill as a request carries it: the YAML an author wrote, or the definition as an object. */
export type SkillSourceInput = { yaml: string; definition?: undefined } | { definition: Record<string, unknown>; yaml?: undefined };

export type ReadSkillSource = { definition: Record<string, unknown>; sourceYaml: string; problems?: undefined } | { definition?: undefined; problems: SkillProblem[] };

/**
 * The definition and the YAML to keep for the editor. YAML that cannot be read is reported by line and column;
 * a definition sent as an object gets YAML written for it, so every version can be shown and edited as YAML.
 */
export function readSkillSource(input: SkillSourceInput): ReadSkillSource {
  if (input.definition !== undefined) return { definition: input.definition, sourceYaml: stringify(input.definition, { lineWidth: 0 }) };
  const document = parseDocument(input.yaml, { prettyErrors: true, uniqueKeys: true });
  if (document.errors.length) {
    return { problems: document.errors.map((error) => ({ path: error.linePos ? `line ${error.linePos[0].line}, column ${error.linePos[0].col}` : '(yaml)', message: firstLine(error.message) })) };
  }
  const definition: unknown = document.toJS({ maxAliasCount: 100 });
  if (definition === null || typeof definition !== 'object' || Array.isArray(definition)) {
    return { problems: [{ path: '(skill)', message: 'the YAML must be a mapping with id, name, start_node and nodes (see the shipped skills/ for an example)' }] };
  }
  return { definition: definition as Record<string, unknown>, sourceYaml: input.yaml };
}

function firstLine(message: string): string {
  return message.split('\n')[0]!;
}
