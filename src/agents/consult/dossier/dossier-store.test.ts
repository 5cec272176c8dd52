import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../core/db/connect.js';
import { ClinAgentError } from '../../../core/errors.js';
import { agentRuns } from '../../../core/db/schema/runs.js';
import { createToolRegistry } from '../../../core/tools/registry.js';
import { ALL_TRACES, createTraceStore } from '../../../core/trace/store.js';
import { openTestDatabase, testEngines } from '../../../testing/test-database.js';
import { buildDossier, createDossierStore, createDossierTool, type DossierSnapshot, type DossierStore } from './index.js';

const snapshot: DossierSnapshot = {
  title: '皮肤科问诊',
  medicalContext: { symptoms: ['红疹', '瘙痒'], duration: '3 天', patient_info: { age: 34, allergies: ['青霉素'] } },
  risk: { risk_level: 'low', score: 10, red_flags: [], advice: 'Self-care is reasonable.' },
  turns: [
    { role: 'user', content: '手腕上起了红疹，很痒' },
    { role: 'assistant', content: '持续多长时间了？' },
  ],
  diagnosis: { summary: 'Contact dermatitis is most likely.' },
};

describe.each(testEngines())('consult dossiers on %s', (engine) => {
  let database: Database;
  let store: DossierStore;
  const userId = randomUUID();

  async function newRun(): Promise<string> {
    const [run] = await database.db.insert(agentRuns).values({ kind: 'consult', userId, status: 'SUSPENDED', currentNode: 'await_patient' }).returning({ id: agentRuns.id });
    return run!.id;
  }

  beforeAll(async () => {
    database = await openTestDatabase({ engine });
    store = createDossierStore(database.db);
  });
  afterAll(() => database?.close());

  it('saves a dossier and reads it back by id and as the run latest, Chinese text intact', async () => {
    const runId = await newRun();
    const content = buildDossier({ ...snapshot, createdAt: new Date('2026-03-01T08:00:00Z') });

    const saved = await store.save({ runId, userId, content });

    expect(saved.createdAt).toBeInstanceOf(Date);
    const byId = await store.get(saved.dossierId);
    expect(byId).toEqual({ dossierId: saved.dossierId, runId, userId, content, createdAt: saved.createdAt });
    expect(byId!.content.history.symptoms).toEqual(['红疹', '瘙痒']);
    expect(await store.latest(runId)).toEqual(byId);
  });

  it("answers the newest of a run's dossiers, and nothing for another run or an unknown or malformed id", async () => {
    const runId = await newRun();
    const otherRun = await newRun();
    // A clock a minute apart per save: two saves within one millisecond would tie on createdAt.
    let minute = 0;
    const store = createDossierStore(database.db, () => new Date(Date.UTC(2026, 2, 1, 8, minute++)));
    const first = await store.save({ runId, userId, content: buildDossier({ ...snapshot, title: 'first', createdAt: new Date() }) });
    const second = await store.save({ runId, userId, content: buildDossier({ ...snapshot, title: 'second', createdAt: new Date() }) });

    expect(second.createdAt.getTime()).toBeGreaterThan(first.createdAt.getTime());
    expect((await store.latest(runId))!.dossierId).toBe(second.dossierId);
    expect((await store.get(first.dossierId))!.content.title).toBe('first');
    expect(await store.latest(otherRun)).toBeUndefined();
    expect(await store.get(randomUUID())).toBeUndefined();
    expect(await store.get('not-a-uuid')).toBeUndefined();
    expect(await store.latest('not-a-uuid')).toBeUndefined();
  });

  it('deletes the dossiers with their consult run', async () => {
    const runId = await newRun();
    const { dossierId } = await store.save({ runId, userId, content: buildDossier({ ...snapshot, createdAt: new Date() }) });

    await database.db.delete(agentRuns).where(eq(agentRuns.id, runId));

    expect(await store.get(dossierId)).toBeUndefined();
  });

  it('generate_medical_dossier builds from the consult state plus patient_data, saves it and returns its id and Markdown', async () => {
    const runId = await newRun();
    const registry = createToolRegistry();
    registry.register(createDossierTool({ snapshot: async () => snapshot, store, runId, userId, now: () => new Date('2026-03-02T09:30:00Z') }));

    const traces = createTraceStore(database.db);
    const trace = await traces.start({ kind: 'consult', name: 'dossier-tool' });

    const call = await registry.run('generate_medical_dossier', JSON.stringify({ patient_data: { chief_complaint: '左手腕红疹伴瘙痒 3 天', allergies: ['磺胺'], name: '张三', phone: '13912345678', additional_information: { 身份证: '110101 19900307 1234' } } }), trace);

    expect(call.error).toBe('');
    const result = call.result as { dossier_id: string; content: string };
    const stored = await store.get(result.dossier_id);
    expect(stored).toMatchObject({ runId, userId });
    expect(stored!.content).toMatchObject({
      created_at: '2026-03-02T09:30:00.000Z',
      chief_complaint: '左手腕红疹伴瘙痒 3 天',
      patient: { age: 34, allergies: ['青霉素', '磺胺'] },
      assessment: { diagnosis_summary: 'Contact dermatitis is most likely.' },
    });
    expect(stored!.content.transcript).toHaveLength(2);
    expect(result.content).toContain('## Chief complaint\n\n左手腕红疹伴瘙痒 3 天');
    expect(result.content).toContain('**Allergies:** 青霉素; 磺胺');
    expect(result.content).not.toContain('## Conversation');
    expect(JSON.stringify(stored) + result.content).not.toMatch(/张三|13912345678|19900307/);
    // The call's trace span keeps the clinical part of its arguments and none of the identifiers.
    const span = (await traces.get(trace.traceId, ALL_TRACES))!.spans.find((s) => s.kind === 'tool')!;
    expect(JSON.stringify(span.input)).toContain('左手腕红疹伴瘙痒 3 天');
    expect(JSON.stringify(span.input)).not.toMatch(/张三|13912345678|19900307/);
  });

  it('generate_medical_dossier works without patient_data', async () => {
    const runId = await newRun();
    const registry = createToolRegistry();
    registry.register(createDossierTool({ snapshot: async () => snapshot, store, runId, userId }));

    const call = await registry.run('generate_medical_dossier', {});

    expect(call.success).toBe(true);
    expect((await store.latest(runId))!.dossierId).toBe((call.result as { dossier_id: string }).dossier_id);
  });

  it('generate_medical_dossier that cannot save tells the model to go on without it', async () => {
    // A run id that names no run: the foreign key refuses the row.
    const tool = createDossierTool({ snapshot: async () => snapshot, store, runId: randomUUID(), userId });

    const failure: unknown = await Promise.resolve(tool.run({ patient_data: {} })).then(() => undefined, (error: unknown) => error);

    if (!ClinAgentError.isInstance(failure)) throw new Error(`expected a ClinAgentError, got ${String(failure)}`);
    expect(failure).toMatchObject({ code: 'INTERNAL', details: { tool: 'generate_medical_dossier' } });
    expect(failure.message).toBe('The medical record could not be generated or saved. Continue the consult without it and tell the patient the record can be requested again later.');
    // Not the failed query, whose text repeats the whole record to the model.
    expect(failure.message).not.toContain('consult_dossiers');
  });
});
