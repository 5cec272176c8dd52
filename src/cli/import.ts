import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { ImportProblem, ImportSummary } from '../contract/trial-data.js';
import { ClinAgentError, errorMessage } from '../core/errors.js';
import { apiFailure, apiToken, createServerApi, serverUrl } from './server-api.js';

/**
 * `clinagent import <projectId> --dictionary f.csv --records f.csv [--events f.csv] [--arms f.csv] | --odm f.xml`:
 * sends a REDCap CSV export or a CDISC ODM file to a running server's import (the multipart parts the console
 * sends), then prints what it changed, or every problem by file, line and field so the data manager can fix the
 * files; nothing is written then.
 */

const USAGE = 'Usage: clinagent import <projectId> --dictionary dictionary.csv --records records.csv [--events events.csv] [--arms arms.csv] [--url URL], or clinagent import <projectId> --odm export.xml [--url URL]';

const CSV_PARTS = ['dictionary', 'records', 'events', 'arms'] as const;
type Part = (typeof CSV_PARTS)[number] | 'odm';

interface ImportInvalidDetails {
  problemCount?: number;
  moreProblems?: number;
  problems?: ImportProblem[];
}

export async function importCommand(args: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args,
    allowPositionals: true,
    options: { dictionary: { type: 'string' }, records: { type: 'string' }, events: { type: 'string' }, arms: { type: 'string' }, odm: { type: 'string' }, url: { type: 'string' } },
  });
  const [projectId] = positionals;
  if (!projectId || positionals.length > 1) throw new ClinAgentError('VALIDATION_FAILED', `${USAGE}; e.g. clinagent import demo-htn-01 --dictionary dictionary.csv --records records.csv`);
  const parts = chooseParts(values);
  const token = apiToken('import');
  const form = await readParts(parts);
  const server = createServerApi(serverUrl(values.url), token);

  const route = `/api/iit/projects/${encodeURIComponent(projectId)}/imports`;
  const answer = await server.send('POST', route, form);
  const { code, details } = (answer.payload ?? {}) as { code?: string; details?: ImportInvalidDetails };
  if (code === 'IMPORT_INVALID' && details?.problems) {
    const problems = details.problems.map((problem) => ({ ...problem, source: userFileName(parts, problem.source) }));
    process.stderr.write(problemsText(problems, details.problemCount ?? problems.length, details.moreProblems ?? 0));
    return 1;
  }
  if (!answer.ok) throw apiFailure('POST', route, answer);
  process.stdout.write(summaryText(projectId, parts, answer.payload as ImportSummary));
  return 0;
}

/** The files named on the command line, by part: one ODM file, or the REDCap CSV export with its two required files. */
function chooseParts(values: Partial<Record<Part | 'url', string>>): Array<{ part: Part; file: string }> {
  const csv = CSV_PARTS.filter((part) => values[part] !== undefined).map((part) => ({ part, file: values[part]! }));
  if (values.odm !== undefined) {
    if (csv.length) throw new ClinAgentError('VALIDATION_FAILED', `Give either --odm or the REDCap CSV files, not both (also given: ${csv.map((c) => `--${c.part}`).join(', ')}); one import reads one export.`, { field: 'odm' });
    return [{ part: 'odm', file: values.odm }];
  }
  const missing = (['dictionary', 'records'] as const).filter((part) => values[part] === undefined);
  if (missing.length) throw new ClinAgentError('VALIDATION_FAILED', `A REDCap CSV import needs ${missing.map((part) => `--${part}`).join(' and ')}. ${USAGE}`, { field: missing[0] });
  return csv;
}

/** Every file read before anything is sent, so all unreadable ones are named at once. */
async function readParts(parts: Array<{ part: Part; file: string }>): Promise<FormData> {
  const read = await Promise.all(parts.map(async ({ part, file }) => {
    try {
      return { part, file, bytes: await readFile(file) };
    } catch (error) {
      const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : errorMessage(error);
      return { part, file, problem: `--${part} ${file}: ${reason} (${path.resolve(file)})` };
    }
  }));
  const unreadable = read.flatMap((r) => (r.problem ? [r.problem] : []));
  if (unreadable.length) {
    throw new ClinAgentError('NOT_FOUND', `Cannot read ${unreadable.length === 1 ? 'this file' : 'these files'}; nothing was sent:\n  ${unreadable.join('\n  ')}\nCheck the paths and try again.`, { files: unreadable });
  }
  const form = new FormData();
  // The file name travels with the part: the server names it in every problem and warning.
  for (const r of read) if (r.bytes) form.append(r.part, new Blob([r.bytes]), path.basename(r.file));
  return form;
}

/**
 * The server names a file by the name it was uploaded with (else by its role, "records.csv"); the user looks for the
 * path they gave, e.g. "exports/records-2026-11.csv".
 */
function userFileName(parts: Array<{ part: Part; file: string }>, source: string): string {
  const given = parts.find((p) => p.part !== 'odm' && (source === path.basename(p.file) || source === `${p.part}.csv`));
  return given ? given.file : source;
}

function problemLine(problem: ImportProblem): string {
  return `${problem.source} line ${problem.line}${problem.element ? ` (${problem.element})` : ''}, field ${problem.field}: ${problem.problem}`;
}

function problemsText(problems: ImportProblem[], problemCount: number, moreProblems: number): string {
  const files = [...new Set(problems.map((p) => p.source))].join(', ');
  const lines = [`Nothing was imported: ${problemCount} problem${problemCount === 1 ? '' : 's'} in ${files}. Fix each line below and import the files again.`, ...problems.map((p) => `  ${problemLine(p)}`)];
  if (moreProblems > 0) lines.push(`  ... and ${moreProblems} more (the server lists the first ${problems.length}); fix these and import again to see the rest.`);
  return lines.join('\n') + '\n';
}

function summaryText(projectId: string, parts: Array<{ part: Part; file: string }>, summary: ImportSummary): string {
  const changed = (isChanged: boolean) => (isChanged ? 'changed' : 'unchanged');
  const { created, updated, unchanged } = summary.records;
  const lines = [
    `Imported ${parts.map((p) => path.basename(p.file)).join(', ')} into project ${projectId}.`,
    `  dictionary: ${summary.fields} field(s), ${changed(summary.isDictionaryChanged)}; events: ${summary.events}, ${changed(summary.isEventsChanged)}; arms: ${summary.arms}, ${changed(summary.isArmsChanged)}`,
    `  records: ${created} created, ${updated} updated, ${unchanged} unchanged`,
  ];
  const warnings = summary.warnings.length + (summary.moreWarnings ?? 0);
  if (warnings) {
    lines.push(`  ${warnings} value(s) outside their validation min/max were imported; QC will report each:`, ...summary.warnings.map((w) => `    ${w.message}`));
    if (summary.moreWarnings) lines.push(`    ... and ${summary.moreWarnings} more`);
  }
  return lines.join('\n') + '\n';
}
