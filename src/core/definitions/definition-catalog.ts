import { ClinAgentError, type ErrorCode } from '../errors.js';

/** What every definition has: an id unique within its kind, and the file it came from (for error messages). */
export interface Definition {
  id: string;
  sourceFile: string;
}

/** What kind of definition a folder holds, so messages name it the way its users do. */
export interface DefinitionKind {
  /** Singular, lowercase: "scenario", "skill". Messages say "scenario ids", "Known scenarios", `scenarioId`. */
  noun: string;
  /** Raised for an invalid file or folder, e.g. SCENARIO_INVALID (422). */
  code: ErrorCode;
  /** Which files in the folder are definitions; others (a README) are ignored. */
  fileNames: RegExp;
  /** The setting naming the folder, e.g. SCENARIOS_DIR, and the formats it holds ("YAML/JSON"). */
  folderSetting: string;
  formats: string;
  /** Where users list the ids, named in a NOT_FOUND message: "GET /api/scenarios". */
  listRoute: string;
}

export interface DefinitionCatalog<T extends Definition> {
  list(): T[];
  /** Throws NOT_FOUND naming the known ids. */
  get(id: string): T;
  has(id: string): boolean;
}

/** The definitions of one kind by id. Two with the same id are refused, naming both files. */
export function createDefinitionCatalog<T extends Definition>(definitions: readonly T[], kind: DefinitionKind): DefinitionCatalog<T> {
  const byId = new Map<string, T>();
  const duplicates: string[] = [];
  for (const definition of definitions) {
    const other = byId.get(definition.id);
    if (other) duplicates.push(duplicateId(kind, definition, other.sourceFile));
    else byId.set(definition.id, definition);
  }
  if (duplicates.length) throw new ClinAgentError(kind.code, `Duplicate ${kind.noun} ids:\n${duplicates.join('\n')}`, { failures: duplicates });
  return {
    list: () => [...byId.values()],
    has: (id) => byId.has(id),
    get(id) {
      const definition = byId.get(id);
      if (!definition) {
        const shown = shownId(id);
        throw new ClinAgentError('NOT_FOUND', `Unknown ${kind.noun} "${shown}". Known ${kind.noun}s: ${[...byId.keys()].join(', ') || '(none)'} (${kind.listRoute}).`, { [`${kind.noun}Id`]: shown });
      }
      return definition;
    },
  };
}

// The id comes from a request or a model's answer: a megabyte of it must not come back in the error.
const ID_CHARS_SHOWN = 60;

function shownId(id: string): string {
  return id.length > ID_CHARS_SHOWN ? `${id.slice(0, ID_CHARS_SHOWN)}…` : id;
}

/** One line per duplicate, naming both files. */
export function duplicateId(kind: DefinitionKind, definition: Definition, otherFile: string): string {
  return `${definition.sourceFile}: ${duplicateProblem(kind, definition, otherFile)}`;
}

/** What is wrong with the later of two files with one id, naming the earlier. */
export function duplicateProblem(kind: DefinitionKind, definition: Definition, otherFile: string): string {
  return `id "${definition.id}" is already used by ${otherFile}; ${kind.noun} ids must be unique`;
}
