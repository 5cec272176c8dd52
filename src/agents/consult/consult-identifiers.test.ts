import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../core/db/connect.js';
import { auditLog } from '../../core/db/schema/audit.js';
import { consultDossiers } from '../../core/db/schema/consult.js';
import { conversationTurns } from '../../core/db/schema/conversations.js';
import { agentRuns } from '../../core/db/schema/runs.js';
import { spans, traces } from '../../core/db/schema/trace.js';
import { startScriptedModel, type ScriptedModel } from '../../testing/scripted-model.js';
import { consultClient } from '../../testing/consult-client.js';
import { startServerOn, type ServerOnDatabase } from '../../testing/server-on-database.js';
import { openTestDatabase, testEngines } from '../../testing/test-database.js';
import { REDACTED } from './safety/identifiers.js';

const decide = (decision: Record<string, unknown>) => ({ reply: JSON.stringify(decision) });

const PATIENT_MESSAGE =
  'My name is Zhang Wei, call me on 13812345678 or 021 6234 5678, ID 110101 19900307 1234, zhang@example.com, I live at 12 Nanjing Road. ' +
  'I have a high fever and a blistering rash spreading over my whole body, my lips are peeling.';

/** Every identifier the patient or the model wrote, and pieces of them a partial removal would leave. */
const IDENTIFIERS = ['Zhang Wei', 'Zhang', '13812345678', '021 6234 5678', '6234 5678', '110101 19900307 1234', '19900307', 'zhang@example.com', '12 Nanjing Road', 'Nanjing', 'Li Na', '139 0000 1111', '010-87654321'];

/** What a model that copies everything it was told would write, under the keys it likes. */
const IDENTIFYING_RECORD = {
  patient_full_name: 'Zhang Wei',
  home_phone: '13812345678',
  residential_address: '12 Nanjing Road',
  identity_card: '110101 19900307 1234',
  additional_information: {
    emergency_contact: { relation: 'wife', name: 'Li Na', mobile: '139 0000 1111' },
    office: '010-87654321',
    email: 'zhang@example.com',
    occupation: 'gardener',
  },
};

function expectNoIdentifier(where: string, value: unknown) {
  const text = JSON.stringify(value);
  for (const identifier of IDENTIFIERS) expect(text, `${where} holds "${identifier}"`).not.toContain(identifier);
}

/**
 * Issue 31: identifiers leave the consult by what they are, under any key, wherever they come from (the patient's
 * message, the model's medical context, its tool call, its own reply). None reaches the model again, a trace, the
 * consult's state or its dossier; the risk check still reads the patient's clinical words. No knowledge search, so
 * both engines run it.
 */
describe.each(testEngines())('identifiers in a consult on %s', (engine) => {
  let database: Database;
  let model: ScriptedModel;
  let server: ServerOnDatabase;
  let token: string;
  let adminToken: string;

  const { call, say } = consultClient(() => ({ url: server.url, token }));

  beforeAll(async () => {
    database = await openTestDatabase({ engine });
    model = await startScriptedModel([]);
    server = await startServerOn(database, { engine, llmBaseUrl: model.baseURL });
    token = (await server.ctx.users.create({ name: 'identifier-patient', role: 'coordinator' })).token;
    adminToken = (await server.ctx.users.create({ name: 'identifier-admin', role: 'admin' })).token;
  });
  afterAll(async () => {
    await server?.close();
    await model?.close();
  });

  it("keeps the patient's and the model's names, phones, ID numbers, addresses and e-mail out of the model, the traces, the state and the dossier", async () => {
    const sessionId = (await call('POST', '/api/consult/sessions', { title: 'Fever and rash' })).body.sessionId as string;
    model.push(
      decide({
        thought: 'Zhang Wei (13812345678) wants a record; save it.',
        action: 'use_tool',
        tool: 'generate_medical_dossier',
        tool_input: { patient_data: { ...IDENTIFYING_RECORD, chief_complaint: 'fever and blistering rash' } },
        medical_context_update: { symptoms: [{ name: 'fever' }, 'blistering rash'], ...IDENTIFYING_RECORD, patient_info: { age: 34, name: 'Zhang Wei', phone: '13812345678' } },
      }),
      decide({ thought: 'Ask about the eyes.', action: 'respond', response: 'Thank you, Zhang Wei; we will call 13812345678 if needed. Are your eyes red or painful?', quick_options: ['Yes', 'No', '021 6234 5678'] }),
    );
    const first = await say(sessionId, PATIENT_MESSAGE);
    // The risk check reads the clinical words the patient wrote beside the identifiers.
    expect(first.riskLevel).toBe('urgent');
    expect(first.response).toMatch(/^⚠️ Seek emergency care now/);
    expect(first.response).toContain(`Thank you, ${REDACTED}; we will call ${REDACTED} if needed. Are your eyes red or painful?`);
    expect(first.quickOptions).toEqual(['Yes', 'No']);
    expectNoIdentifier('the reply', first);

    model.push(decide({ thought: 'Conclude.', action: 'diagnose', ready_reason: 'urgent signs', response: 'This may be a severe drug reaction; go to an emergency department now.' }));
    const second = await say(sessionId, 'No, my eyes are fine.');
    expect(second.action).toBe('diagnose');

    // Every request the model received: the patient's message (the first request) and everything sent back after.
    expect(model.requests).toHaveLength(3);
    model.requests.forEach((request, index) => expectNoIdentifier(`model request ${index + 1}`, request.body));
    // What is left around the identifiers still reaches the model.
    expect(JSON.stringify(model.requests[0]!.body)).toContain('blistering rash spreading over my whole body');
    expect(JSON.stringify(model.requests[2]!.body)).toContain('gardener');
    expect(JSON.stringify(model.requests[2]!.body)).toContain('fever');

    const session = await call('GET', `/api/consult/sessions/${sessionId}`);
    expect(session.status).toBe(200);
    expect(session.body.medicalContext).toMatchObject({ symptoms: expect.arrayContaining(['fever', 'blistering rash']), patient_info: { age: 34 } });
    expectNoIdentifier('the consult state', session.body);

    // The traces are the patient's own (issue 32); an admin sees their timings without content.
    for (const reply of [first, second]) {
      for (const reader of [token, adminToken]) {
        const trace = await call('GET', `/api/traces/${reply.traceId}`, undefined, reader);
        expect(trace.status).toBe(200);
        expectNoIdentifier(`trace ${reply.traceId}`, trace.body);
      }
    }

    // The dossier call is traced with what of its arguments is not identifying.
    const toolSpan = (await call('GET', `/api/traces/${first.traceId}`, undefined, token)).body.spans.find((span: { kind: string; name: string }) => span.kind === 'tool' && span.name === 'generate_medical_dossier');
    expect(JSON.stringify(toolSpan.input)).toContain('fever and blistering rash');
    expect(JSON.stringify(toolSpan.input)).toContain('gardener');

    const dossier = await call('GET', `/api/consult/sessions/${sessionId}/dossier?format=md`);
    expect(dossier.status).toBe(200);
    expect(dossier.body).toContain('blistering rash');
    expectNoIdentifier('the dossier', dossier.body);

    await server.ctx.trace.flush();
    const db = server.ctx.db;
    expectNoIdentifier('the stored traces', await db.select().from(traces));
    expectNoIdentifier('the stored spans', await db.select().from(spans));
    expectNoIdentifier('the stored runs', await db.select().from(agentRuns));
    expectNoIdentifier('the stored dossiers', await db.select({ content: consultDossiers.content }).from(consultDossiers));
    expectNoIdentifier('the stored conversation', await db.select().from(conversationTurns));
    expectNoIdentifier('the audit trail', await db.select().from(auditLog));
  });
});
