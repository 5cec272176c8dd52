import { parseArgs } from 'node:util';
import cliProgress from 'cli-progress';
import { loadAuditKey } from '../core/audit/load-audit-key.js';
import type { AuditKey } from '../core/audit/audit-key.js';
import { loadConfig } from '../core/config.js';
import { openDatabase, type Database } from '../core/db/connect.js';
import { copyDatabase, type CopyDatabaseReport, type CopyProgress } from '../core/db/copy/copy-database.js';
import { migrateDatabase } from '../core/db/migrate.js';
import { ClinAgentError } from '../core/errors.js';

const USAGE = 'Usage: clinagent db copy --to <postgres url> [--from <data dir>] [--dry-run]';

/** Tables smaller than this copy in well under a second: a bar would only flicker. */
const PROGRESS_BAR_MIN_ROWS = 10_000;

/**
 * `clinagent db copy --to postgres://...`: moves everything from the embedded database (DATA_DIR, or --from <dir>;
 * DATABASE_URL when set and no --from) into an empty PostgreSQL database, then checks the row count of every table and
 * every audit chain there. Exit code 1 on any difference. Stop the server first: the embedded folder belongs to one
 * process, and a running server would go on writing to the source after the copy.
 */
export async function dbCommand(args: string[]): Promise<number> {
  const options = parseDbArgs(args);
  const config = loadConfig(options.from ? { ...process.env, DATA_DIR: options.from } : process.env);
  const auditKey = await loadKeyIfAny(config.audit);
  const fromUrl = options.from ? undefined : config.databaseUrl;
  if (fromUrl && sameDatabase(fromUrl, options.to)) {
    throw new ClinAgentError('VALIDATION_FAILED', `--to names the database the copy reads from (DATABASE_URL). Pass an empty database as --to. ${USAGE}`, { field: '--to' });
  }
  const source = await openDatabase({ databaseUrl: fromUrl, dataDir: fromUrl ? undefined : config.dataDir, auditKey, poolSize: 2 });
  let target: Database | undefined;
  try {
    target = await openDatabase({ databaseUrl: options.to, auditKey, poolSize: 2 });
    process.stdout.write(`${options.dryRun ? 'Checking a copy' : 'Copying'} from ${fromUrl ? describeUrl(fromUrl) : `the embedded database in ${config.dataDir}`} to ${describeUrl(options.to)}.\n`);
    // The source at this version's schema, as any start would leave it; the copy then migrates the target to the same.
    if (!options.dryRun) await migrateDatabase(source, fromUrl ? config.databaseMigrationUrl : undefined);
    const progress = createProgress();
    const report = await copyDatabase(source, target, { dryRun: options.dryRun, onTableStart: progress.start, onProgress: progress.update }).finally(progress.stop);
    printReport(report, options.to);
    return report.ok ? 0 : 1;
  } finally {
    await target?.close();
    await source.close();
  }
}

interface DbCopyOptions {
  to: string;
  from?: string;
  dryRun: boolean;
}

function parseDbArgs(args: string[]): DbCopyOptions {
  let parsed;
  try {
    parsed = parseArgs({ args, allowPositionals: true, strict: true, options: { to: { type: 'string' }, from: { type: 'string' }, 'dry-run': { type: 'boolean' } } });
  } catch (error) {
    throw new ClinAgentError('VALIDATION_FAILED', `${(error as Error).message}. ${USAGE}`, {}, { cause: error });
  }
  const [subcommand, ...extra] = parsed.positionals;
  if (subcommand !== 'copy' || extra.length) {
    throw new ClinAgentError('VALIDATION_FAILED', `${subcommand === undefined ? 'No db subcommand given' : `Unknown arguments "${parsed.positionals.join(' ')}"`}. ${USAGE}`);
  }
  const to = parsed.values.to;
  if (!to) throw new ClinAgentError('VALIDATION_FAILED', `--to is required: the URL of an empty PostgreSQL database, e.g. postgres://clinagent@db.example.org:5432/clinagent. ${USAGE}`, { field: '--to' });
  let url: URL;
  try {
    url = new URL(to);
  } catch {
    throw new ClinAgentError('VALIDATION_FAILED', `--to "${to}" is not a URL. Pass a PostgreSQL URL such as postgres://clinagent@db.example.org:5432/clinagent. ${USAGE}`, { field: '--to' });
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new ClinAgentError('VALIDATION_FAILED', `--to must be a postgres:// or postgresql:// URL, not ${url.protocol}//. ${USAGE}`, { field: '--to' });
  }
  return { to, from: parsed.values.from, dryRun: parsed.values['dry-run'] ?? false };
}

/**
 * The key the source's audit trail was written with. A source that never had one (nothing audited yet) copies
 * without it; copyDatabase refuses a source with audit entries and no key, naming where the key is read from.
 */
async function loadKeyIfAny(settings: ReturnType<typeof loadConfig>['audit']): Promise<AuditKey | undefined> {
  try {
    return (await loadAuditKey(settings, { createIfMissing: false })).key;
  } catch (error) {
    if (ClinAgentError.isInstance(error) && error.code === 'CONFIG_MISSING') return undefined;
    throw error;
  }
}

function sameDatabase(a: string, b: string): boolean {
  const key = (u: string) => {
    const url = new URL(u);
    return `${url.hostname}:${url.port || '5432'}${url.pathname}`;
  };
  return key(a) === key(b);
}

/** Host, port and database, never the password. */
function describeUrl(value: string): string {
  const url = new URL(value);
  return `${url.hostname}${url.port ? `:${url.port}` : ''}${url.pathname}`;
}

function printReport(report: CopyDatabaseReport, to: string): void {
  const width = Math.max(5, ...report.tables.map((t) => t.table.length));
  const lines = [`${'table'.padEnd(width)}  ${'source'.padStart(9)}  ${report.dryRun ? '' : 'target'.padStart(9)}`.trimEnd()];
  for (const t of [...report.tables].sort((a, b) => a.table.localeCompare(b.table))) {
    lines.push(`${t.table.padEnd(width)}  ${String(t.source).padStart(9)}${report.dryRun ? '' : `  ${String(t.target).padStart(9)}${t.source === t.target ? '' : '  MISMATCH'}`}`);
  }
  process.stdout.write(lines.join('\n') + '\n');
  if (report.skipped.length) process.stdout.write(`Not on the target, and empty on the source, so nothing is lost: ${report.skipped.join(', ')}.\n`);
  if (report.leftOut.length) process.stdout.write(leftOutNotice(report));
  if (report.dryRun) {
    process.stdout.write('Dry run: the target is empty and can take this copy; nothing was written. Run again without --dry-run to copy.\n');
    return;
  }
  const audit = report.audit!;
  const projects = `${audit.chains} project${audit.chains === 1 ? '' : 's'}`;
  if (audit.ok) process.stdout.write(`audit chain OK (${audit.entries} entries, ${projects})\n`);
  else process.stdout.write(`AUDIT CHAIN PROBLEM (${audit.entries} entries, ${projects}):\n${audit.problems.map((p) => `  ${p}`).join('\n')}\n`);
  const mismatched = report.tables.filter((t) => t.source !== t.target).map((t) => t.table);
  if (mismatched.length) process.stdout.write(`Row counts differ in ${mismatched.join(', ')}.\n`);
  if (report.ok) {
    process.stdout.write(`Copied ${report.tables.reduce((n, t) => n + t.target, 0)} rows in ${report.tables.length} tables and ${report.sequences} sequences. Next: set DATABASE_URL=${redact(to)} (the server's .env) and start ClinAgent; keep the old data folder until you have checked the trials there.\n`);
  } else {
    process.stdout.write('The copy does not match the source: do not switch to it. Drop the target database, create it empty, and run the copy again; report the lines above if it happens again.\n');
  }
}

/**
 * What a copy to a server without pgvector left behind, and how to bring it back: retrieval (document search for the
 * protocol assistant and scenarios with rag) is unavailable there until the documents are embedded again.
 */
function leftOutNotice(report: CopyDatabaseReport): string {
  const tables = report.leftOut.map((t) => `${t.table} (${t.rows} row${t.rows === 1 ? '' : 's'})`).join(', ');
  const documents = report.documentsToIngest.map((d) => `    ${d.scenarioId}: ${d.sourceFile} (document ${d.id}, collection ${d.collection})`);
  return [
    `${report.dryRun ? 'Will leave' : 'Left'} behind: ${tables}: the document embeddings for retrieval, which need the pgvector extension the target server does not have. Everything else ${report.dryRun ? 'will be' : 'was'} copied; retrieval answers VECTOR_STORE_UNAVAILABLE on the target until they are back.`,
    ...(documents.length ? ['Documents to ingest again:', ...documents] : []),
    'To bring them back you need a PostgreSQL server with pgvector (e.g. `apt install postgresql-16-pgvector`, or the pgvector/pgvector image) and a database created there after pgvector was installed (the migrations create the embeddings table only where pgvector is): either copy again from this source into such an empty database (the embeddings come along), or run ClinAgent on it and ingest each document above again (`clinagent ingest <scenarioId> <file>`; a scenario\'s own documents are ingested at start, a trial\'s protocol documents are uploaded again on its Protocol tab).',
    '',
  ].join('\n');
}

function redact(value: string): string {
  const url = new URL(value);
  if (url.password) url.password = '***';
  return url.toString();
}

/** A bar on a terminal for big tables; one line per big table elsewhere (CI logs, tests), where redraws are noise. */
function createProgress(): { start(table: string, total: number): void; update(progress: CopyProgress): void; stop(): void } {
  let bar: cliProgress.SingleBar | undefined;
  const stop = () => {
    bar?.stop();
    bar = undefined;
  };
  return {
    start(table, total) {
      stop();
      if (total < PROGRESS_BAR_MIN_ROWS) return;
      if (!process.stderr.isTTY) {
        process.stderr.write(`copying ${table} (${total} rows)\n`);
        return;
      }
      bar = new cliProgress.SingleBar({ format: `${table} {bar} {value}/{total} rows | {duration_formatted}`, stream: process.stderr, hideCursor: true }, cliProgress.Presets.shades_classic);
      bar.start(total, 0);
    },
    update(progress) {
      bar?.update(progress.copied);
    },
    stop,
  };
}
