import JSZip from 'jszip';
import { describe, expect, it } from 'vitest';
import { buildDossier, dossierDocx, dossierJson, dossierMarkdown, type DossierInput } from './index.js';

/** A concluded consult: contact dermatitis from a new watch strap, a penicillin allergy, one image analysed. */
const consult: DossierInput = {
  title: '皮肤科问诊 2026-03-01',
  medicalContext: {
    symptoms: ['红疹', '瘙痒'],
    location: ['左手腕'],
    duration: '3 天',
    triggers: ['new metal watch strap'],
    patient_info: { age: 34, sex: 'female', pregnant: false, allergies: ['青霉素'], skin_type: 'dry' },
    suspected_conditions: ['接触性皮炎', 'eczema'],
    severity: 'mild',
  },
  risk: { risk_level: 'low', score: 10, red_flags: [], advice: 'Self-care is reasonable; see a doctor if it spreads or does not improve within two weeks.' },
  turns: [
    { role: 'user', content: '手腕上起了红疹，很痒' },
    { role: 'assistant', content: '持续多长时间了？' },
    { role: 'user', content: '3 天，换了新表带之后' },
  ],
  diagnosis: { summary: 'Allergic contact dermatitis from the watch strap (nickel) is most likely.', ready_reason: '症状描述完整，有明确诱因' },
  medications: {
    medications: [{ name: 'Hydrocortisone 1% cream', class: 'topical corticosteroid', route: 'topical', dosage: 'Apply thinly twice daily for up to 7 days' }],
    warnings: ['Amoxicillin excluded: penicillin allergy.'],
  },
  imageFindings: ['Well-demarcated erythematous patch matching the strap'],
  createdAt: new Date('2026-03-01T08:00:00Z'),
};

function section(markdown: string, heading: string): string {
  const start = markdown.indexOf(`\n## ${heading}\n`);
  expect(start, `section "${heading}"`).toBeGreaterThanOrEqual(0);
  const end = markdown.indexOf('\n## ', start + 1);
  return markdown.slice(start, end < 0 ? undefined : end);
}

describe('buildDossier', () => {
  it('records the consult: complaint, history, patient, findings, risk, assessment, plan, transcript and disclaimer', () => {
    const dossier = buildDossier(consult);

    expect(dossier).toMatchObject({
      title: '皮肤科问诊 2026-03-01',
      created_at: '2026-03-01T08:00:00.000Z',
      chief_complaint: '手腕上起了红疹，很痒',
      history: { symptoms: ['红疹', '瘙痒'], location: ['左手腕'], duration: '3 天', triggers: ['new metal watch strap'], missing_info: [] },
      patient: { age: 34, sex: 'female', pregnant: false, breastfeeding: null, allergies: ['青霉素'] },
      examination: { image_findings: ['Well-demarcated erythematous patch matching the strap'] },
      risk: { level: 'low', score: 10, red_flags: [] },
      assessment: { suspected_conditions: ['接触性皮炎', 'eczema'], diagnosis_summary: consult.diagnosis!.summary, ready_reason: '症状描述完整，有明确诱因' },
      plan: consult.medications,
      additional_information: { Severity: 'mild', 'Skin type': 'dry' },
    });
    expect(dossier.transcript).toEqual(consult.turns);
    expect(dossier.disclaimer).toMatch(/not a medical diagnosis by a clinician/);
  });

  it("keeps the consult's own values first and lets patient_data fill gaps and add to lists", () => {
    const dossier = buildDossier({
      ...consult,
      diagnosis: undefined,
      patientData: {
        chief_complaint: 'Itchy rash on the left wrist for 3 days',
        duration: '2 weeks',
        symptoms: ['瘙痒', 'scaling'],
        patient_info: { age: 40, breastfeeding: 'no', allergies: ['sulfonamides'] },
        diagnosis: 'Contact dermatitis',
        occupation: 'nurse',
      },
    });

    expect(dossier.chief_complaint).toBe('Itchy rash on the left wrist for 3 days');
    expect(dossier.history.duration).toBe('3 天');
    expect(dossier.history.symptoms).toEqual(['红疹', '瘙痒', 'scaling']);
    expect(dossier.patient).toMatchObject({ age: 34, breastfeeding: false, allergies: ['青霉素', 'sulfonamides'] });
    expect(dossier.assessment).toMatchObject({ diagnosis_summary: 'Contact dermatitis', ready_reason: null });
    expect(dossier.additional_information).toEqual({ Severity: 'mild', 'Skin type': 'dry', Occupation: 'nurse' });
  });

  it('holds no name, phone, ID number or address, whatever the model passed or the patient typed', () => {
    const dossier = buildDossier({
      ...consult,
      medicalContext: { ...consult.medicalContext, patient_info: { ...consult.medicalContext.patient_info, name: 'Li Wei', 姓名: '王芳' } },
      turns: [...consult.turns, { role: 'user', content: '我的电话是 138 1234 5678，身份证 110105198001011234，邮箱 li.wei@example.com' }],
      patientData: {
        name: 'Li Wei',
        phone: '+44 20 7946 0958',
        id_number: 'X1234567',
        address: '1 High Street',
        姓名: '张三',
        联系电话: '13912345678',
        身份证号码: '110105198001011234',
        家庭住址: '北京市朝阳区',
        patient_info: { full_name: 'Li Wei', age: 34, 'ID-Number': 'X1234567' },
        contacts: [{ Email: 'li.wei@example.com', relation: 'sister' }],
      },
    });

    const json = dossierJson(dossier);
    for (const identifier of ['Li Wei', '王芳', '张三', '7946', 'X1234567', 'High Street', '13912345678', '110105198001011234', '北京市朝阳区', '1234 5678', 'example.com']) {
      expect(json).not.toContain(identifier);
    }
    expect(dossier.additional_information).toEqual({ Severity: 'mild', 'Skin type': 'dry', Contacts: 'Relation: sister' });
    expect(dossier.transcript.at(-1)!.content).toBe('我的电话是 [identifier removed]，身份证 [identifier removed]，邮箱 [identifier removed]');
    // Durations, ages and doses are numbers too, and stay.
    expect(json).toContain('3 天');
    expect(json).toContain('"age": 34');
  });

  it('reads a model-written context that does not have its documented shape, and says what was not recorded', () => {
    const dossier = buildDossier({
      title: 'Consult',
      medicalContext: { symptoms: 'itchy scalp' as never, patient_info: 'adult' as never, missing_info: ['duration'] },
      risk: { risk_level: 'urgent', score: 90, red_flags: [{ id: 'fever_with_widespread_rash', description: 'Fever with a widespread rash' }], advice: 'Seek emergency care now.' },
      turns: [],
      createdAt: new Date('2026-03-01T08:00:00Z'),
    });

    expect(dossier).toMatchObject({
      chief_complaint: 'itchy scalp',
      history: { symptoms: ['itchy scalp'], location: [], duration: null, missing_info: ['duration'] },
      patient: { age: null, sex: null, pregnant: null, allergies: [] },
      assessment: { suspected_conditions: [], diagnosis_summary: null },
      plan: { medications: [], warnings: [] },
    });
    const markdown = dossierMarkdown(dossier);
    expect(section(markdown, 'Risk assessment')).toContain('**Risk level:** URGENT (score 90 of 100)\n\n> **Red flag:** Fever with a widespread rash\n\n**Advice:** Seek emergency care now.');
    expect(section(markdown, 'History')).toContain('**Duration:** Not recorded');
    expect(section(markdown, 'History')).toContain('**Still unknown:** duration');
    // Nobody asked about allergies: the record must not read as "none".
    expect(section(markdown, 'Patient information')).toContain('**Allergies:** Not recorded');
    expect(section(markdown, 'Assessment')).toContain('The consult has not concluded yet.');
    expect(section(markdown, 'Plan')).toContain('No medication was offered.');
  });
});

describe('dossier exports', () => {
  const dossier = buildDossier(consult);
  const HEADINGS = ['Chief complaint', 'History', 'Patient information', 'Examination and image findings', 'Risk assessment', 'Assessment', 'Plan', 'Conversation'];

  it('JSON is the record itself', () => {
    expect(JSON.parse(dossierJson(dossier))).toEqual(dossier);
  });

  it('Markdown has every section in order, the disclaimer first and the Chinese values as written', () => {
    const markdown = dossierMarkdown(dossier);

    expect(markdown.split('\n').filter((line) => line.startsWith('## '))).toEqual(HEADINGS.map((heading) => `## ${heading}`));
    expect(markdown.startsWith('# 皮肤科问诊 2026-03-01\n\nConsult record generated 2026-03-01T08:00:00.000Z.\n\n> **Not a diagnosis:** This record was produced by an AI')).toBe(true);
    expect(section(markdown, 'Chief complaint')).toContain('手腕上起了红疹，很痒');
    expect(section(markdown, 'History')).toContain('**Symptoms:** 红疹; 瘙痒\n\n**Location:** 左手腕\n\n**Duration:** 3 天');
    expect(section(markdown, 'Patient information')).toContain('**Age:** 34\n\n**Sex:** female\n\n**Pregnant:** No\n\n**Breastfeeding:** Not recorded\n\n**Allergies:** 青霉素');
    expect(section(markdown, 'Risk assessment')).toContain('**Risk level:** Low (score 10 of 100)');
    expect(section(markdown, 'Assessment')).toContain('- 接触性皮炎\n- eczema');
    expect(section(markdown, 'Assessment')).toContain('**Why the consult concluded:** 症状描述完整，有明确诱因');
    expect(section(markdown, 'Plan')).toContain('| Hydrocortisone 1% cream | topical corticosteroid | topical | Apply thinly twice daily for up to 7 days |  |');
    expect(section(markdown, 'Plan')).toContain('### Medication warnings\n\n- Amoxicillin excluded: penicillin allergy.');
    expect(section(markdown, 'Conversation')).toContain('**Patient:** 手腕上起了红疹，很痒\n\n**Consult:** 持续多长时间了？');
  });

  it('Markdown for the model leaves the transcript out', () => {
    const markdown = dossierMarkdown(dossier, { transcript: false });

    expect(markdown).not.toContain('## Conversation');
    expect(markdown).toContain('## Plan');
  });

  it('DOCX is a zip whose document holds every heading and the Chinese values', async () => {
    const buffer = await dossierDocx(dossier);

    expect(buffer.subarray(0, 2).toString('latin1')).toBe('PK');
    const xml = await (await JSZip.loadAsync(buffer)).file('word/document.xml')!.async('string');
    const paragraphs = xml.split('</w:p>').map((paragraph) => [...paragraph.matchAll(/<w:t(?: [^>]*)?>([^<]*)<\/w:t>/g)].map((match) => match[1]).join(''));
    for (const heading of ['皮肤科问诊 2026-03-01', ...HEADINGS]) expect(paragraphs).toContain(heading);
    expect(paragraphs).toContain('Symptoms: 红疹; 瘙痒');
    expect(paragraphs).toContain('Patient: 手腕上起了红疹，很痒');
    expect(paragraphs.some((text) => text.startsWith('Not a diagnosis: This record was produced by an AI'))).toBe(true);
  });
});
