import { prepareDatabaseTemplates } from './database-templates.js';

/**
 * vitest globalSetup: makes sure this run's migrated template databases exist before any test file opens a
 * database, and hands them to the test workers, which vitest starts with this process's environment.
 */
export async function setup(): Promise<void> {
  Object.assign(process.env, await prepareDatabaseTemplates(process.env.TEST_DATABASE_URL));
}
