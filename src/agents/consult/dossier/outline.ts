import type { DocumentBlock } from '../../../core/documents/index.js';
import type { DossierContent } from './build-dossier.js';

const RISK_WORDS = { low: 'Low', moderate: 'Moderate', high: 'High', urgent: 'URGENT' } as const;
const ROLE_WORDS: Record<string, string> = { user: 'Patient', assistant: 'Consult' };

const yesNo = (value: boolean | null) => (value === null ? 'Not recorded' : value ? 'Yes' : 'No');
const orNotRecorded = (value: string | number | null) => (value === null || value === '' ? 'Not recorded' : String(value));
const joined = (items: string[]) => (items.length ? items.join('; ') : 'Not recorded');

/** "None reported" only when someone asked: a record that never asked must not read as "no allergies". */
function allergiesText(patient: DossierContent['patient']): string {
  if (patient.allergies.length) return patient.allergies.join('; ');
  return patient.allergy_status === 'none' ? 'None reported' : 'Not recorded';
}

function listOr(items: string[], empty: string): DocumentBlock {
  return items.length ? { kind: 'list', ordered: false, items } : { kind: 'paragraph', text: empty };
}

function riskSection(risk: DossierContent['risk']): DocumentBlock[] {
  return [
    { kind: 'heading', level: 2, text: 'Risk assessment' },
    { kind: 'field', label: 'Risk level', value: `${RISK_WORDS[risk.level] ?? risk.level} (score ${risk.score} of 100)` },
    ...risk.red_flags.map((redFlag): DocumentBlock => ({ kind: 'note', tone: 'warning', label: 'Red flag', text: redFlag.description })),
    { kind: 'field', label: 'Advice', value: risk.advice },
  ];
}

function assessmentSection(assessment: DossierContent['assessment']): DocumentBlock[] {
  return [
    { kind: 'heading', level: 2, text: 'Assessment' },
    { kind: 'heading', level: 3, text: 'Suspected conditions' },
    listOr(assessment.suspected_conditions, 'None named yet.'),
    ...(assessment.diagnosis_summary
      ? [{ kind: 'field', label: 'Summary', value: assessment.diagnosis_summary } as const]
      : [{ kind: 'paragraph', text: 'The consult has not concluded yet.' } as const]),
    ...(assessment.ready_reason ? [{ kind: 'field', label: 'Why the consult concluded', value: assessment.ready_reason } as const] : []),
  ];
}

function planSection(plan: DossierContent['plan']): DocumentBlock[] {
  const medications: DocumentBlock = plan.medications.length
    ? {
        kind: 'table',
        columns: ['Medication', 'Class', 'Route', 'Dosage', 'Notes'],
        rows: plan.medications.map((drug) => [drug.name, drug.class, drug.route, drug.dosage, drug.notes ?? '']),
      }
    : { kind: 'paragraph', text: 'No medication was offered.' };
  return [
    { kind: 'heading', level: 2, text: 'Plan' },
    medications,
    ...(plan.warnings.length ? [{ kind: 'heading', level: 3, text: 'Medication warnings' } as const, { kind: 'list', ordered: false, items: plan.warnings } as const] : []),
  ];
}

/**
 * The dossier's content for every format: the disclaimer first (a reader meets it before anything else), then the
 * record in the order a clinical note is read, and the transcript last (left out where the text must stay short).
 */
export function dossierOutline(content: DossierContent, options: { transcript: boolean }): DocumentBlock[] {
  const { history, patient } = content;
  const additional = Object.entries(content.additional_information);
  return [
    { kind: 'heading', level: 1, text: content.title },
    { kind: 'paragraph', text: `Consult record generated ${content.created_at}.` },
    { kind: 'note', tone: 'caution', label: 'Not a diagnosis', text: content.disclaimer },
    { kind: 'heading', level: 2, text: 'Chief complaint' },
    { kind: 'paragraph', text: orNotRecorded(content.chief_complaint) },
    { kind: 'heading', level: 2, text: 'History' },
    { kind: 'field', label: 'Symptoms', value: joined(history.symptoms) },
    { kind: 'field', label: 'Location', value: joined(history.location) },
    { kind: 'field', label: 'Duration', value: orNotRecorded(history.duration) },
    { kind: 'field', label: 'Triggers', value: joined(history.triggers) },
    ...(history.missing_info.length ? [{ kind: 'field', label: 'Still unknown', value: history.missing_info.join('; ') } as const] : []),
    { kind: 'heading', level: 2, text: 'Patient information' },
    { kind: 'field', label: 'Age', value: orNotRecorded(patient.age) },
    { kind: 'field', label: 'Sex', value: orNotRecorded(patient.sex) },
    { kind: 'field', label: 'Pregnant', value: yesNo(patient.pregnant) },
    { kind: 'field', label: 'Breastfeeding', value: yesNo(patient.breastfeeding) },
    { kind: 'field', label: 'Allergies', value: allergiesText(patient) },
    ...additional.map(([label, value]): DocumentBlock => ({ kind: 'field', label, value })),
    { kind: 'heading', level: 2, text: 'Examination and image findings' },
    listOr(content.examination.image_findings, 'No image was analysed; the record rests on what the patient reported.'),
    ...riskSection(content.risk),
    ...assessmentSection(content.assessment),
    ...planSection(content.plan),
    ...(options.transcript
      ? [
          { kind: 'heading', level: 2, text: 'Conversation' } as const,
          ...content.transcript.map((turn): DocumentBlock => ({ kind: 'field', label: ROLE_WORDS[turn.role] ?? turn.role, value: turn.content })),
        ]
      : []),
  ];
}
