import path from 'node:path';
import { claimAuditChainKey } from '../core/audit/audit-chain-key.js';
import { loadAuditKey } from '../core/audit/load-audit-key.js';
import { loadConfig } from '../core/config.js';
import { openDatabase } from '../core/db/connect.js';
import { hasVectorStore, migrateDatabase } from '../core/db/migrate.js';

export async function migrateCommand(): Promise<number> {
  const config = loadConfig();
  // The key first: migration 0008 signs the entries already in the trail with it.
  const auditKey = await loadAuditKey(config.audit, { createIfMissing: true });
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, auditKey: auditKey.key });
  try {
    await migrateDatabase(database, config.databaseMigrationUrl);
    await claimAuditChainKey(database.db, auditKey.key);
    const vectors = await hasVectorStore(database.db);
    process.stdout.write(`Migrations applied (${database.engine}).${vectors ? '' : ' Note: no pgvector on this server, so RAG is unavailable.'}\n`);
    if (auditKey.createdFile) process.stdout.write(`Created the audit key file ${auditKey.createdFile}: back it up now, apart from the database; without it the audit trail cannot be verified.\n`);
    if (auditKey.legacy) process.stdout.write(`The audit key was read from ${auditKey.legacy.file}, in the working folder, where older versions put it. Move it to ${auditKey.legacy.moveTo} (mkdir -p "${path.dirname(auditKey.legacy.moveTo)}" && mv "${auditKey.legacy.file}" "${auditKey.legacy.moveTo}"), or set AUDIT_KEY_FILE to where you keep it.\n`);
    return 0;
  } finally {
    await database.close();
  }
}
