import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../core/db/connect.js';
import { postEventStream, streamedText } from '../../../testing/read-event-stream.js';
import { startScriptedModel, type ScriptedModel } from '../../../testing/scripted-model.js';
import { consultClient } from '../../../testing/consult-client.js';
import { startServerOn, type ServerOnDatabase } from '../../../testing/server-on-database.js';
import { openTestDatabase, testEngines } from '../../../testing/test-database.js';
import { createDossierStore } from '../dossier/index.js';

const decide = (decision: Record<string, unknown>) => ({ reply: JSON.stringify(decision) });
const PNG_1PX = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');

/**
 * Issue 31: what the consult records about the patient (pregnancy, allergies, age, their own words) rules drugs out
 * whatever the model passes or writes. The model here does everything wrong on purpose: it calls search_medication
 * without contraindications and names excluded drugs (English, Chinese, brand, a class member the formulary does not
 * list) in its replies, its diagnosis and its quick options. No knowledge search, so both engines run it.
 */
describe.each(testEngines())('medication safety and the dossier of a consult on %s', (engine) => {
  let database: Database;
  let model: ScriptedModel;
  let server: ServerOnDatabase;
  let token: string;

  const { call, start, say } = consultClient(() => ({ url: server.url, token }), { title: 'Acne' });
  /** The JSON result of the tool call the consult sent the model last. */
  const lastToolResult = () => {
    const sent = model.requests.at(-1)!.body.messages.at(-1).content as string;
    return JSON.parse(sent.slice(sent.indexOf('{'), sent.lastIndexOf('}') + 1)).result;
  };
  const spansOf = async (traceId: string) => (await call('GET', `/api/traces/${traceId}`)).body.spans as Array<{ kind: string; name: string; input: any; output: any }>;
  const dossierJson = async (sessionId: string) => {
    const { body } = await call('GET', `/api/consult/sessions/${sessionId}/dossier?format=json`);
    return typeof body === 'string' ? JSON.parse(body) : body;
  };
  const dossierMd = async (sessionId: string) => (await call('GET', `/api/consult/sessions/${sessionId}/dossier?format=md`)).body as string;

  beforeAll(async () => {
    database = await openTestDatabase({ engine });
    model = await startScriptedModel([]);
    server = await startServerOn(database, { engine, llmBaseUrl: model.baseURL, env: { VISION_MODEL: 'scripted-vision', VISION_BASE_URL: model.baseURL } });
    token = (await server.ctx.users.create({ name: 'safety-coordinator', role: 'coordinator' })).token;
  });
  afterAll(async () => {
    await server?.close();
    await model?.close();
  });

  it('applies the recorded pregnancy to search_medication and takes isotretinoin, Accutane and minocycline out of the reply, recording why', async () => {
    const sessionId = await start();
    model.push(decide({ thought: 'Ask about the acne.', action: 'respond', response: 'Where is the acne?', quick_options: ['Face'], medical_context_update: { symptoms: ['acne'], patient_info: { pregnant: true, sex: 'female' } } }));
    await say(sessionId, 'I have acne and I am 20 weeks along.');

    model.push(
      decide({ thought: 'Look up acne drugs.', action: 'use_tool', tool: 'search_medication', tool_input: { condition: 'acne' } }),
      decide({ thought: 'Offer the strongest.', action: 'respond', response: 'Azelaic acid cream is a good start. Oral isotretinoin works best for severe acne! Minocycline 100 mg daily is another option.', quick_options: ['Tell me about Accutane', 'Azelaic acid'] }),
    );
    const reply = await say(sessionId, 'On my face, what can I take?');
    const offered = lastToolResult() as { medications: Array<{ name: string }>; warnings: string[] };
    const names = offered.medications.map((m) => m.name.toLowerCase()).join(' | ');
    expect(names).toContain('azelaic acid');
    expect(names).not.toMatch(/isotretinoin|doxycycline|adapalene/);
    expect(offered.warnings.join(' ')).toMatch(/isotretinoin capsules excluded: avoid in pregnancy/);

    expect(reply.response).toContain('Azelaic acid cream is a good start.');
    expect(reply.response).not.toMatch(/isotretinoin|accutane|minocycline/i);
    expect(reply.response).toContain('⚠️ A medicine in this answer is not suitable for you (avoid in pregnancy) and was taken out.');
    expect(reply.quickOptions).toEqual(['Azelaic acid']);

    const safety = (await spansOf(reply.traceId)).find((span) => span.name === 'medication_safety');
    expect(safety?.output.removed).toEqual(expect.arrayContaining([
      expect.objectContaining({ drug: 'isotretinoin capsules', reason: expect.stringMatching(/pregnan/) }),
      expect.objectContaining({ drug: 'minocycline', reason: expect.stringMatching(/pregnan/) }),
      expect.objectContaining({ drug: 'isotretinoin capsules', said: 'accutane' }),
    ]));
    // The session the patient reloads shows the checked text, not the model's.
    const session = (await call('GET', `/api/consult/sessions/${sessionId}`)).body;
    expect(JSON.stringify(session.turns)).not.toMatch(/isotretinoin|minocycline/i);
  });

  it('checks a Chinese diagnosis and the dossier: 异维A酸 and 多西环素 never reach the patient, the offered drugs are in the plan', async () => {
    const sessionId = await start();
    model.push(
      decide({ thought: '查药。', action: 'use_tool', tool: 'search_medication', tool_input: { condition: '痤疮', contraindications: [] }, medical_context_update: { symptoms: ['痤疮'], patient_info: { pregnant: true } } }),
      decide({ thought: '可以下结论。', action: 'diagnose', ready_reason: '典型寻常痤疮', response: '这是寻常痤疮。建议口服异维A酸。也可以外用壬二酸乳膏。强力霉素（多西环素）也有效。', medical_context_update: { suspected_conditions: ['寻常痤疮'] } }),
    );
    const diagnosed = await say(sessionId, '我怀孕了，脸上长痘痘，能用什么药？');
    expect(diagnosed.action).toBe('diagnose');
    expect(diagnosed.response).toContain('这是寻常痤疮。');
    expect(diagnosed.response).toContain('也可以外用壬二酸乳膏。');
    expect(diagnosed.response).not.toMatch(/异维a酸|多西环素|强力霉素/i);
    expect(diagnosed.response).toContain('⚠️ 回答中提到的一种药物不适合您（孕期禁用），已删除。');

    // A later reply must not become the diagnosis in the record.
    model.push(decide({ thought: 'Record asked.', action: 'respond', response: 'Your consult record is ready to download.', quick_options: [] }));
    await say(sessionId, '请给我病历');
    const dossier = await dossierJson(sessionId);
    expect(dossier.assessment.diagnosis_summary).toContain('这是寻常痤疮');
    expect(dossier.assessment.diagnosis_summary).not.toMatch(/ready to download|异维a酸|多西环素/i);
    expect(dossier.plan.medications.map((m: { name: string }) => m.name).join(' ')).toContain('azelaic acid');
    expect(dossier.plan.warnings.join(' ')).toContain('isotretinoin capsules excluded');
    expect(dossier.patient.pregnant).toBe(true);
    const md = await dossierMd(sessionId);
    expect(md).not.toContain('No medication was offered');
    // The transcript keeps what the patient saw, which was already checked.
    expect(JSON.stringify(dossier.transcript)).not.toMatch(/异维a酸|多西环素/i);
  });

  it('reads "I am allergic to penicillin" from the patient\'s words: the search, the reply and the dossier all honour it', async () => {
    const sessionId = await start();
    model.push(
      decide({ thought: 'Find antibiotics.', action: 'use_tool', tool: 'search_medication', tool_input: { condition: 'cellulitis' }, medical_context_update: { symptoms: ['red, hot, swollen leg'] } }),
      decide({ thought: 'Offer one.', action: 'respond', response: 'Flucloxacillin 500 mg four times a day is the usual treatment. Cephalexin is an alternative. Please see a doctor today.', quick_options: [] }),
    );
    const reply = await say(sessionId, 'My leg is red, hot and swollen. I am allergic to penicillin.');
    const offered = lastToolResult() as { medications: Array<{ name: string }>; warnings: string[] };
    const names = offered.medications.map((m) => m.name.toLowerCase()).join(' | ');
    expect(names).not.toMatch(/flucloxacillin|amoxicillin|cephalexin/);
    expect(names).toMatch(/clarithromycin|erythromycin|clindamycin/);
    expect(reply.response).not.toMatch(/flucloxacillin|cephalexin/i);
    expect(reply.response).toContain('Please see a doctor today.');
    expect(reply.response).toContain('not suitable for you (penicillin allergy) and was taken out.');
    expect(reply.response).toContain('not suitable for you (cross-reactivity with penicillin allergy) and was taken out.');

    const dossier = await dossierJson(sessionId);
    expect(dossier.patient.allergies.join(' ')).toMatch(/penicillin/);
    const md = await dossierMd(sessionId);
    expect(md).toMatch(/\*\*Allergies:\*\* [^\n]*penicillin/);
    expect(md).not.toContain('None reported');
  });

  it('reads 青霉素过敏 the same way, and streams no excluded drug either', async () => {
    const sessionId = await start();
    model.push({ ...decide({ thought: '回答。', action: 'respond', response: '可以口服阿莫西林。请尽快就医。', quick_options: [] }), stream: { pieceChars: 3 } });
    const events = await postEventStream(`${server.url}/api/consult/sessions/${sessionId}/messages/stream`, token, { message: '腿上红肿发热，我青霉素过敏。' });
    const streamed = streamedText(events);
    expect(streamed).toContain('请尽快就医。');
    expect(streamed).not.toContain('阿莫西林');
    const result = events.at(-1)!;
    expect(result.event).toBe('result');
    expect(result.data.response).not.toContain('阿莫西林');
    expect(result.data.response).toContain('请尽快就医。');
  });

  it('builds the dossier from the recorded tool results: image findings and offered drugs, allergies not recorded when nobody asked', async () => {
    const sessionId = await start();
    model.push(
      decide({ thought: 'Look at the photo.', action: 'use_tool', tool: 'analyze_skin_image', tool_input: { image_base64: 'attachment:1', context: 'itchy patches' } }),
      { reply: JSON.stringify({ findings: ['ill-defined erythematous scaly patches in the elbow folds'], conditions: [{ name: 'atopic eczema', likelihood: 'high' }] }) },
      decide({ thought: 'Drugs.', action: 'use_tool', tool: 'search_medication', tool_input: { condition: 'eczema' } }),
      decide({ thought: 'Conclude.', action: 'diagnose', ready_reason: 'Typical flexural eczema.', response: 'This looks like atopic eczema. Use an emollient and hydrocortisone 1% cream.' }),
    );
    await say(sessionId, 'Itchy patches in my elbow folds, photo attached.', { data: PNG_1PX.toString('base64') });
    model.push(decide({ thought: 'Record.', action: 'respond', response: 'Your consult record is ready to download.', quick_options: [] }));
    await say(sessionId, 'Can I have a record?');

    const dossier = await dossierJson(sessionId);
    expect(dossier.examination.image_findings.join(' ')).toContain('ill-defined erythematous scaly patches');
    expect(dossier.plan.medications.map((m: { name: string }) => m.name).join(' ')).toMatch(/hydrocortisone 1% cream/);
    expect(dossier.assessment.diagnosis_summary).toContain('This looks like atopic eczema.');
    const md = await dossierMd(sessionId);
    expect(md).not.toContain('No image was analysed');
    expect(md).not.toContain('No medication was offered');
    expect(md).toContain('**Allergies:** Not recorded');
    expect(md).not.toContain('Your consult record is ready to download.\n\n**Why');
  });

  it('drops identifiers by what they are, under any key: from the dossier, from what goes back to the model and from the trace', async () => {
    const sessionId = await start();
    const identifiers = ['王小明', 'Wang Xiaoming', '010-62345678', '13912345678', '北京市海淀区中关村大街27号', '110101 19900307 1234', '021 6234 5678', 'wxm@example.com', '12 Baker Street'];
    model.push(
      decide({
        thought: 'Make the record.',
        action: 'use_tool',
        tool: 'generate_medical_dossier',
        tool_input: {
          patient_data: {
            chief_complaint: 'itchy rash for 3 days',
            patient_full_name: '王小明',
            english_name: 'Wang Xiaoming',
            home_phone: '010-62345678',
            mobile: '13912345678',
            residential_address: '北京市海淀区中关村大街27号',
            identity_card: '110101 19900307 1234',
            contact_person: { relation: 'mother', number: '021 6234 5678' },
            notes: 'write to wxm@example.com or 12 Baker Street',
            skin_type: 'dry',
          },
        },
      }),
      decide({ thought: 'Done.', action: 'respond', response: 'Your record is ready.', quick_options: [] }),
    );
    const reply = await say(sessionId, 'Please make a record of this consult.');
    const sentBack = model.requests.at(-1)!.body.messages.at(-1).content as string;
    expect(sentBack).toContain('itchy rash for 3 days');
    expect(sentBack).toContain('**Skin type:** dry');
    const dossierId = JSON.parse(sentBack.slice(sentBack.indexOf('{'), sentBack.lastIndexOf('}') + 1)).result.dossier_id as string;
    const stored = (await createDossierStore(server.ctx.db).get(dossierId))!.content;
    const toolSpan = (await spansOf(reply.traceId)).find((span) => span.kind === 'tool' && span.name === 'generate_medical_dossier');
    for (const value of identifiers) {
      expect(sentBack, value).not.toContain(value);
      expect(JSON.stringify(stored), value).not.toContain(value);
      expect(JSON.stringify(toolSpan?.output), value).not.toContain(value);
    }
    expect(stored.chief_complaint).toBe('itchy rash for 3 days');
    expect(stored.additional_information).toMatchObject({ 'Skin type': 'dry', 'Contact person': 'Relation: mother' });
  });
});
