import path from 'node:path';
import { closeContext, createContext, type AppContext } from '../context.js';
import { loadConfig } from '../core/config.js';
import type { Database } from '../core/db/connect.js';
import { createLogger, type Logger } from '../core/logger.js';
import { packageRoot } from '../core/paths.js';
import { openTestDatabase } from './test-database.js';

interface TestContextOptions {
  /** Base URL of a scripted model server; absent means no LLM configured. */
  llmBaseUrl?: string;
  env?: Record<string, string | undefined>;
  engine?: 'pglite' | 'postgres';
  startJobs?: boolean;
  database?: Database;
  /** Where log lines go; silent by default. */
  logger?: Logger;
}

/** Same shape as production: real migrations, real gateway pointed at the scripted model, no mocks. */
export async function buildTestContext(options: TestContextOptions = {}): Promise<AppContext & { close(): Promise<void> }> {
  const database = options.database ?? (await openTestDatabase({ engine: options.engine }));
  const config = loadConfig({
    SCENARIOS_DIR: path.join(packageRoot(), 'scenarios'),
    SKILLS_DIR: path.join(packageRoot(), 'skills'),
    DATA_DIR: path.join(packageRoot(), '.clinagent-test-unused'),
    LLM_BASE_URL: options.llmBaseUrl,
    LLM_MODEL: options.llmBaseUrl ? 'scripted-model' : undefined,
    LLM_API_KEY: options.llmBaseUrl ? 'sk-test-secret-key-000000000000' : undefined,
    LLM_MAX_RETRIES: '2',
    LLM_TIMEOUT_MS: '5000',
    ...options.env,
  });
  const ctx = await createContext(config, { database, logger: options.logger ?? createLogger('silent'), startJobs: options.startJobs });
  return {
    ...ctx,
    // The server's own shutdown order (closeContext), then the test's database, which the context did not open.
    async close() {
      await closeContext(ctx, { keepDatabase: true });
      await database.close();
    },
  };
}
