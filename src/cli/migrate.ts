import { loadConfig } from '../core/config.js';
import { openDatabase } from '../core/db/connect.js';
import { hasVectorStore, migrateDatabase } from '../core/db/migrate.js';

export async function migrateCommand(): Promise<number> {
  const config = loadConfig();
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  try {
    await migrateDatabase(database, config.databaseMigrationUrl);
    const vectors = await hasVectorStore(database.db);
    process.stdout.write(`Migrations applied (${database.engine}).${vectors ? '' : ' Note: no pgvector on this server, so RAG is unavailable.'}\n`);
    return 0;
  } finally {
    await database.close();
  }
}
