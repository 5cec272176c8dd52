import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trialFields } from '../../core/db/schema/trial.js';
import { buildTestContext } from '../../testing/test-context.js';
import { createTrialStore } from '../store/trial-store.js';
import { eventOf, loadRecordContext } from './record-context.js';

const field = (fieldName: string) => ({ fieldName, formName: 'f', fieldType: 'text' as const, label: fieldName, choices: [], validationMin: null, validationMax: null, required: false });

/** What a model may see of a record: every field once, and no identifier field in any of its export columns. */
describe('record context for models', () => {
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;

  beforeAll(async () => {
    ctx = await buildTestContext();
    const store = createTrialStore(ctx.db);
    await store.ensureProject({ id: 'rc', name: 'Record context' });
    await store.replaceDictionary('rc', [field('record_id'), field('phone'), field('contact'), field('age')], 'test');
    await ctx.db.update(trialFields).set({ identifier: true }).where(and(eq(trialFields.projectId, 'rc'), eq(trialFields.fieldName, 'phone')));
    await ctx.db.update(trialFields).set({ identifier: true }).where(and(eq(trialFields.projectId, 'rc'), eq(trialFields.fieldName, 'contact')));
    await store.importRecords('rc', [{ recordId: 'R1', eventName: '', site: 'S', data: { record_id: 'R1', phone: '13800138000', contact___1: '1', contact___2: '0', age: 40 } }], { actor: 'test' });
  });

  afterAll(async () => {
    await ctx?.close();
  });

  it('withholds identifier fields, each checkbox column of one included, from the model view only', async () => {
    const context = await loadRecordContext(ctx.db, 'rc', 'R1');
    expect(Object.keys(context.modelView).sort()).toEqual(['age', 'record_id', 'site']);
    expect(context.data).toMatchObject({ phone: '13800138000', contact___1: '1', contact___2: '0', age: 40 });
  });

  it('attributes a top-level field to the first visit and takes the site from whichever row carries it', async () => {
    const store = createTrialStore(ctx.db);
    await store.ensureProject({ id: 'visits', name: 'Visits' });
    await store.replaceDictionary('visits', [field('record_id'), field('age'), field('sbp')], 'test');
    await store.replaceEvents('visits', [
      { eventName: 'screen', label: 'Screening', dayOffset: 0, windowBefore: 0, windowAfter: 0 },
      { eventName: 'week4', label: 'Week 4', dayOffset: 28, windowBefore: 3, windowAfter: 3 },
    ], 'test');
    await store.importRecords('visits', [
      { recordId: 'V1', eventName: 'week4', site: 'SITE-07', data: { record_id: 'V1', sbp: '130' } },
      { recordId: 'V1', eventName: 'screen', site: '', data: { record_id: 'V1', age: '40' } },
    ], { actor: 'test' });

    const context = await loadRecordContext(ctx.db, 'visits', 'V1');

    expect(context.site).toBe('SITE-07');
    expect(context.data.age).toBe('40');
    expect(eventOf(context, 'age')).toBe('screen');
    expect(eventOf(context, 'week4.sbp')).toBe('week4');
    expect(eventOf(await loadRecordContext(ctx.db, 'rc', 'R1'), 'age')).toBe('');
  });
});
