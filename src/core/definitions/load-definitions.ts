import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { z } from 'zod';
import { ClinAgentError, errorMessage, formatIssues } from '../errors.js';
import { createDefinitionCatalog, duplicateId, duplicateProblem, type Definition, type DefinitionCatalog, type DefinitionKind } from './definition-catalog.js';

/**
 * Definition files (scenarios, QC skills, and the agent definitions to come) are folders of YAML or JSON files
 * that people edit by hand and that the product must not start with half of. One loader reads them all, so every
 * kind reports a bad file the same way: the file, each field and the reason, every problem at once.
 */
export interface DefinitionSpec<S extends z.ZodType, T extends Definition> {
  kind: DefinitionKind;
  /** The file as written (usually snake_case); its issues are reported as `path: message` lines. */
  schema: S;
  /**
   * Turns a file that passed its schema into the definition. Checks a schema cannot express (a document that
   * must exist, a rule that must compile) push one `path: reason` line each to `problems`; any line there makes
   * the file invalid, so `build` goes on and reports all of them rather than stopping at the first.
   */
  build(file: string, parsed: z.output<S>, problems: string[]): T;
}

/** Reads and validates one definition file; `filePath` is resolved, and every message names it. */
export function loadDefinitionFile<S extends z.ZodType, T extends Definition>(filePath: string, spec: DefinitionSpec<S, T>): T {
  const { kind } = spec;
  const file = path.resolve(filePath);
  const isJson = /\.json$/i.test(file);
  let raw: unknown;
  try {
    const text = readFileSync(file, 'utf8');
    raw = isJson ? JSON.parse(text) : parseYaml(text);
  } catch (error) {
    const problem = `cannot be read as ${isJson ? 'JSON' : 'YAML'}: ${errorMessage(error)}`;
    throw new ClinAgentError(kind.code, `${file}: ${problem}`, { file, problems: [problem] });
  }
  const built = buildDefinition(raw, file, spec);
  if (built.problems) throw invalidFile(kind, file, built.problems, built.id);
  return built.definition;
}

/** A definition checked whole, or every problem with it (`path: reason` lines) and the id it declares, if any. */
export type BuiltDefinition<T> = { definition: T; problems?: undefined; id: string } | { definition?: undefined; problems: string[]; id?: string };

/**
 * Checks a definition already read (from a file, a database row or a request body) the way a file is checked:
 * its schema, then `build`. `source` is what `build` records as the definition's `sourceFile`.
 */
export function buildDefinition<S extends z.ZodType, T extends Definition>(raw: unknown, source: string, spec: DefinitionSpec<S, T>): BuiltDefinition<T> {
  // The id as written, so a folder that keeps its good files can still name a bad one by it.
  const id = raw !== null && typeof raw === 'object' && typeof (raw as { id?: unknown }).id === 'string' ? (raw as { id: string }).id : undefined;
  const parsed = spec.schema.safeParse(raw);
  if (!parsed.success) return { problems: formatIssues(parsed.error.issues), id };
  const problems: string[] = [];
  const definition = spec.build(source, parsed.data, problems);
  return problems.length ? { problems, id } : { definition, id: definition.id };
}

/** A file of a folder that did not load: its problems as `path: reason` lines, and one message naming the file. */
export interface DefinitionFailure {
  file: string;
  /** The id the file declares, when it declares one. */
  id?: string;
  problems: string[];
  message: string;
}

/**
 * Every definition file directly in `directory` (those matching `kind.fileNames`), in name order, each on its
 * own: the valid ones, and every file that is not, with all its problems. A second file with an id already taken
 * is the invalid one, naming the first. Only an unreadable folder throws (CONFIG_INVALID).
 */
export function readDefinitionFolder<S extends z.ZodType, T extends Definition>(directory: string, spec: DefinitionSpec<S, T>): { definitions: T[]; failures: DefinitionFailure[] } {
  const { kind } = spec;
  let names: string[];
  try {
    names = readdirSync(directory).filter((name) => kind.fileNames.test(name)).sort();
  } catch (error) {
    throw new ClinAgentError('CONFIG_INVALID', `Cannot read the ${kind.noun}s folder ${directory}: ${errorMessage(error)}. Set ${kind.folderSetting} to a folder of ${kind.noun} ${kind.formats} files.`, { field: kind.folderSetting });
  }
  const definitions: T[] = [];
  const failures: DefinitionFailure[] = [];
  const fileOf = new Map<string, string>();
  for (const name of names) {
    const file = path.resolve(directory, name);
    try {
      const definition = loadDefinitionFile(file, spec);
      const other = fileOf.get(definition.id);
      if (other) {
        failures.push({ file, id: definition.id, problems: [duplicateProblem(kind, definition, other)], message: duplicateId(kind, definition, other) });
        continue;
      }
      fileOf.set(definition.id, definition.sourceFile);
      definitions.push(definition);
    } catch (error) {
      const details = ClinAgentError.isInstance(error) ? error.details : {};
      const problems = Array.isArray(details.problems) ? details.problems.map(String) : [errorMessage(error)];
      failures.push({ file, ...(typeof details.id === 'string' ? { id: details.id } : {}), problems, message: errorMessage(error) });
    }
  }
  return { definitions, failures };
}

/**
 * Every definition file directly in `directory`, in name order. One invalid file fails the whole load, listing
 * every invalid file and every duplicate id with both files, so a typo is never silently dropped from the product.
 */
export function loadDefinitionFiles<S extends z.ZodType, T extends Definition>(directory: string, spec: DefinitionSpec<S, T>): T[] {
  const { definitions, failures } = readDefinitionFolder(directory, spec);
  if (failures.length) throw new ClinAgentError(spec.kind.code, `Invalid ${spec.kind.noun} files in ${directory}:\n${failures.map((f) => f.message).join('\n')}`, { directory, failures: failures.map((f) => f.message) });
  return definitions;
}

/** Loads a folder of definitions into a catalog: `get(id)` (NOT_FOUND naming the known ids) and `list()`. */
export function loadDefinitions<S extends z.ZodType, T extends Definition>(directory: string, spec: DefinitionSpec<S, T>): DefinitionCatalog<T> {
  return createDefinitionCatalog(loadDefinitionFiles(directory, spec), spec.kind);
}

function invalidFile(kind: DefinitionKind, file: string, problems: string[], id: string | undefined): ClinAgentError {
  return new ClinAgentError(kind.code, `${file} is not a valid ${kind.noun}:\n- ${problems.join('\n- ')}`, { file, problems, ...(id === undefined ? {} : { id }) });
}
