import { afterAll, beforeAll } from 'vitest';
import { createTrialStore, type TrialStore } from '../trial/store/trial-store.js';
import { openTestDatabase } from './test-database.js';

/**
 * A trial store on its own test database for one describe block (opened before its tests, closed after), and
 * `newProject()` making a fresh project in it for each test. `store` is usable in the block's body: it forwards to
 * the store once the database is open.
 */
export function useTrialStore(engine: 'pglite' | 'postgres', projectPrefix: string): { store: TrialStore; newProject(): Promise<string> } {
  let opened: TrialStore | undefined;
  let close: (() => Promise<void>) | undefined;
  let projectSeq = 0;
  beforeAll(async () => {
    const database = await openTestDatabase({ engine });
    close = () => database.close();
    opened = createTrialStore(database.db);
  });
  afterAll(async () => {
    await close?.();
  });
  const store = new Proxy({} as TrialStore, {
    get(_target, key) {
      if (!opened) throw new Error('the trial store is opened in beforeAll; use it inside a test or hook');
      return opened[key as keyof TrialStore];
    },
  });
  return {
    store,
    async newProject() {
      const id = `${projectPrefix}-${++projectSeq}`;
      await store.ensureProject({ id, name: id }, 'dm.alice');
      return id;
    },
  };
}
