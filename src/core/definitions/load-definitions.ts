import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { z } from 'zod';
import { ClinAgentError, errorMessage, formatIssues } from '../errors.js';
import { createDefinitionCatalog, duplicateId, type Definition, type DefinitionCatalog, type DefinitionKind } from './definition-catalog.js';

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
    throw new ClinAgentError(kind.code, `${file}: cannot be read as ${isJson ? 'JSON' : 'YAML'}: ${errorMessage(error)}`, { file });
  }
  const parsed = spec.schema.safeParse(raw);
  if (!parsed.success) throw invalidFile(kind, file, formatIssues(parsed.error.issues));
  const problems: string[] = [];
  const definition = spec.build(file, parsed.data, problems);
  if (problems.length) throw invalidFile(kind, file, problems);
  return definition;
}

/**
 * Every definition file directly in `directory` (those matching `kind.fileNames`), in name order. One invalid
 * file fails the whole load, listing every invalid file and every duplicate id with both files, so a typo is
 * never silently dropped from the product.
 */
export function loadDefinitionFiles<S extends z.ZodType, T extends Definition>(directory: string, spec: DefinitionSpec<S, T>): T[] {
  const { kind } = spec;
  let names: string[];
  try {
    names = readdirSync(directory).filter((name) => kind.fileNames.test(name)).sort();
  } catch (error) {
    throw new ClinAgentError('CONFIG_INVALID', `Cannot read the ${kind.noun}s folder ${directory}: ${errorMessage(error)}. Set ${kind.folderSetting} to a folder of ${kind.noun} ${kind.formats} files.`, { field: kind.folderSetting });
  }
  const definitions: T[] = [];
  const failures: string[] = [];
  const fileOf = new Map<string, string>();
  for (const name of names) {
    try {
      const definition = loadDefinitionFile(path.join(directory, name), spec);
      const other = fileOf.get(definition.id);
      if (other) {
        failures.push(duplicateId(kind, definition, other));
        continue;
      }
      fileOf.set(definition.id, definition.sourceFile);
      definitions.push(definition);
    } catch (error) {
      failures.push(errorMessage(error));
    }
  }
  if (failures.length) throw new ClinAgentError(kind.code, `Invalid ${kind.noun} files in ${directory}:\n${failures.join('\n')}`, { directory, failures });
  return definitions;
}

/** Loads a folder of definitions into a catalog: `get(id)` (NOT_FOUND naming the known ids) and `list()`. */
export function loadDefinitions<S extends z.ZodType, T extends Definition>(directory: string, spec: DefinitionSpec<S, T>): DefinitionCatalog<T> {
  return createDefinitionCatalog(loadDefinitionFiles(directory, spec), spec.kind);
}

function invalidFile(kind: DefinitionKind, file: string, problems: string[]): ClinAgentError {
  return new ClinAgentError(kind.code, `${file} is not a valid ${kind.noun}:\n- ${problems.join('\n- ')}`, { file, problems });
}
