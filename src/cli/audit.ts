import { readFile, writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { anchorAuditChains, AuditAnchors, checkAuditAnchors } from '../core/audit/audit-anchor.js';
import { readAuditChainKey } from '../core/audit/audit-chain-key.js';
import { loadAuditKey } from '../core/audit/load-audit-key.js';
import { checkAuditChain, listAuditChains } from '../core/audit/verify-audit-chain.js';
import { loadConfig } from '../core/config.js';
import { openDatabase, type Db } from '../core/db/connect.js';
import { migrateDatabase } from '../core/db/migrate.js';
import { ClinAgentError, formatIssues } from '../core/errors.js';

const USAGE = 'Usage: clinagent audit verify [projectId] [--anchor FILE]... [--export FILE]   (every project, and the platform trail, when no id is given)';

/**
 * `clinagent audit verify [projectId]`: recomputes the keyed hash chain of one project's audit trail, or of every
 * chain, and prints one line each with its head (entry id and hash). `--export FILE` writes those heads as an
 * anchor file to keep outside the server; `--anchor FILE` checks the trail against one written earlier, which is
 * what shows the newest entries deleted since. Exit code 1 when any chain is broken or any anchor no longer holds.
 */
export async function auditCommand(args: string[]): Promise<number> {
  const { projectId, anchorFiles, exportFile } = parseAuditArgs(args);
  const anchors = await Promise.all(anchorFiles.map(readAnchorFile));
  const config = loadConfig();
  // Never a new key here: entries written with the old one could not verify against it.
  const { key } = await loadAuditKey(config.audit, { createIfMissing: false });
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, auditKey: key });
  try {
    // A trail written before the chain was keyed is signed by migration 0008, so verify the migrated state.
    await migrateDatabase(database, config.databaseMigrationUrl);
    let failures = 0;
    const recorded = await readAuditChainKey(database.db);
    if (recorded && recorded.fingerprint !== key.fingerprint) {
      process.stdout.write(`audit key: the trail is chained with the key of fingerprint ${recorded.fingerprint}, but ${key.source} has fingerprint ${key.fingerprint}: use the key the server uses, or every entry reads as altered.\n`);
      failures++;
    }
    const anchored = anchors.flatMap(({ anchors: file }) => file.chains.map((chain) => chain.projectId));
    const chains = projectId === undefined ? [...new Set([...(await listAuditChains(database.db)), ...anchored])].sort() : [projectId];
    if (!chains.length) {
      process.stdout.write('The audit trail is empty: nothing to verify.\n');
    }
    for (const chain of chains) failures += await verifyChain(database.db, chain);
    for (const { file, anchors: fileAnchors } of anchors) {
      const relevant = { ...fileAnchors, chains: fileAnchors.chains.filter((anchor) => chains.includes(anchor.projectId)) };
      for (const check of await checkAuditAnchors(database.db, relevant)) {
        process.stdout.write(`${check.projectId}: ${check.ok ? 'anchor ok' : 'ANCHOR BROKEN'} (${file}): ${check.message}\n`);
        if (!check.ok) failures++;
      }
    }
    if (exportFile !== undefined) {
      const heads = await anchorAuditChains(database.db, projectId);
      await writeFile(exportFile, `${JSON.stringify(heads, null, 2)}\n`);
      process.stdout.write(`Anchored ${heads.chains.length} chain${heads.chains.length === 1 ? '' : 's'} in ${exportFile}: keep it outside this server, and check the trail against it later with --anchor.\n`);
    }
    return failures ? 1 : 0;
  } finally {
    await database.close();
  }
}

async function verifyChain(db: Db, chain: string): Promise<number> {
  const result = await checkAuditChain(db, chain);
  if (result.entries === 0) {
    process.stdout.write(`${chain}: no audit entries. Check the project id (clinagent audit verify lists every project).\n`);
    return 1;
  }
  if (result.ok) {
    process.stdout.write(`${chain}: ok, ${result.entries} entries, head entry ${result.headId} hash ${result.headHash}\n`);
    return 0;
  }
  process.stdout.write(`${chain}: BROKEN at entry ${result.firstBadEntryId} of ${result.entries}: ${result.problem}\n`);
  return 1;
}

function parseAuditArgs(args: string[]): { projectId?: string; anchorFiles: string[]; exportFile?: string } {
  let parsed;
  try {
    parsed = parseArgs({ args, allowPositionals: true, strict: true, options: { anchor: { type: 'string', multiple: true }, export: { type: 'string' } } });
  } catch (error) {
    throw new ClinAgentError('VALIDATION_FAILED', `${(error as Error).message}. ${USAGE}`, {}, { cause: error });
  }
  const [subcommand, projectId, ...extra] = parsed.positionals;
  if (subcommand !== 'verify' || extra.length) {
    throw new ClinAgentError('VALIDATION_FAILED', `${subcommand === undefined ? 'No audit subcommand given' : `Unknown arguments "${args.join(' ')}"`}. ${USAGE}`);
  }
  return { projectId, anchorFiles: parsed.values.anchor ?? [], exportFile: parsed.values.export };
}

async function readAnchorFile(file: string): Promise<{ file: string; anchors: AuditAnchors }> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new ClinAgentError('VALIDATION_FAILED', `Cannot read the anchor file ${file}: ${(error as Error).message}. Pass a file written by \`clinagent audit verify --export\`.`, { field: '--anchor', file }, { cause: error });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ClinAgentError('VALIDATION_FAILED', `The anchor file ${file} is not JSON (${(error as Error).message}). Pass a file written by \`clinagent audit verify --export\`.`, { field: '--anchor', file }, { cause: error });
  }
  const parsed = AuditAnchors.safeParse(json);
  if (!parsed.success) {
    const problems = formatIssues(parsed.error.issues);
    throw new ClinAgentError('VALIDATION_FAILED', `The anchor file ${file} is not an audit anchor file: ${problems.join('; ')}. Pass a file written by \`clinagent audit verify --export\`.`, { field: '--anchor', file, problems });
  }
  return { file, anchors: parsed.data };
}
