import { listAuditChains, verifyAuditChain } from '../core/audit/verify-audit-chain.js';
import { loadConfig } from '../core/config.js';
import { openDatabase } from '../core/db/connect.js';
import { migrateDatabase } from '../core/db/migrate.js';
import { ClinAgentError } from '../core/errors.js';

const USAGE = 'Usage: clinagent audit verify [projectId]   (every project, and the platform trail, when no id is given)';

/**
 * `clinagent audit verify [projectId]`: recomputes the hash chain of one project's audit trail, or of every
 * chain, and prints one line each with the head hash (record it elsewhere to notice later truncation).
 * Exit code 1 when any chain is broken, naming the first bad entry.
 */
export async function auditCommand(args: string[]): Promise<number> {
  const [subcommand, projectId, ...extra] = args;
  if (subcommand !== 'verify' || extra.length) {
    throw new ClinAgentError('VALIDATION_FAILED', `${subcommand === undefined ? 'No audit subcommand given' : `Unknown arguments "${args.join(' ')}"`}. ${USAGE}`);
  }
  const config = loadConfig();
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  try {
    // A trail written before the chain existed is chained by migration 0005, so verify the migrated state.
    await migrateDatabase(database, config.databaseMigrationUrl);
    const chains = projectId === undefined ? await listAuditChains(database.db) : [projectId];
    if (!chains.length) {
      process.stdout.write('The audit trail is empty: nothing to verify.\n');
      return 0;
    }
    let broken = 0;
    for (const chain of chains) {
      const result = await verifyAuditChain(database.db, chain);
      if (result.entries === 0) {
        process.stdout.write(`${chain}: no audit entries. Check the project id (clinagent audit verify lists every project).\n`);
        broken++;
      } else if (result.ok) {
        process.stdout.write(`${chain}: ok, ${result.entries} entries, head ${result.headHash}\n`);
      } else {
        process.stdout.write(`${chain}: BROKEN at entry ${result.firstBadEntryId} of ${result.entries}: ${result.problem}\n`);
        broken++;
      }
    }
    return broken ? 1 : 0;
  } finally {
    await database.close();
  }
}
