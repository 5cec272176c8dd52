import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDatabase, testEngines } from '../../testing/test-database.js';
import { createTrialStore, type TrialStore } from '../store/trial-store.js';
import { DEMO_PROJECT } from './demo-definition.js';
import { ensureDemoTrial, loadDemoTrial } from './load-demo-trial.js';

describe.each(testEngines())('the demo trial on %s', (engine) => {
  let close: () => Promise<void>;
  let store: TrialStore;
  const snapshot = async () => ({
    fields: await store.getDictionary(DEMO_PROJECT.id),
    events: await store.getEvents(DEMO_PROJECT.id),
    records: await store.listRecords(DEMO_PROJECT.id),
    audit: await store.listAudit(DEMO_PROJECT.id),
  });

  beforeAll(async () => {
    const database = await openTestDatabase({ engine });
    close = () => database.close();
    store = createTrialStore(database.db);
  });

  afterAll(async () => {
    await close?.();
  });

  it('loads on first start: 200 subjects at 4 visits in 3 sites, each row audited', async () => {
    const loaded = await ensureDemoTrial(store, 'system');

    expect(loaded).toMatchObject({ projectId: 'demo-htn-01', isProjectCreated: true, fields: 12, events: 4, records: { created: 800, updated: 0, unchanged: 0 } });
    expect(await store.countRecords(DEMO_PROJECT.id)).toEqual({ rows: 800, subjects: 200 });
    expect((await store.listSites(DEMO_PROJECT.id)).map((site) => site.site)).toEqual(['SITE-01', 'SITE-02', 'SITE-03']);
    expect((await store.getEvents(DEMO_PROJECT.id)).map((event) => [event.eventName, event.dayOffset, event.windowBefore, event.windowAfter])).toEqual([
      ['v1_arm_1', 0, 0, 0],
      ['v2_arm_1', 28, 3, 3],
      ['v3_arm_1', 56, 5, 5],
      ['v4_arm_1', 84, 7, 7],
    ]);
    expect((await store.listAudit(DEMO_PROJECT.id, { entityType: 'record' })).length).toBe(800);
  });

  it('changes nothing when loaded again', async () => {
    const before = await snapshot();

    const again = await loadDemoTrial(store, 'system');

    expect(again).toMatchObject({ isProjectCreated: false, isDictionaryChanged: false, isEventsChanged: false, records: { created: 0, updated: 0, unchanged: 800 } });
    expect(await snapshot()).toEqual(before);
  });

  it('keeps corrections to demo records across restarts', async () => {
    const [s001] = await store.getRecord(DEMO_PROJECT.id, 'S001');
    await store.importRecords(DEMO_PROJECT.id, [{ ...s001!, data: { ...s001!.data, weight_kg: 90.1 } }], { actor: 'dm.alice', reason: 'query answered' });

    expect(await ensureDemoTrial(store, 'system')).toBeUndefined();
    expect((await store.getRecord(DEMO_PROJECT.id, 'S001'))[0]?.data.weight_kg).toBe(90.1);
  });
});
