import { describe, expect, it } from 'vitest';
import { contextRows, dossierSections, humanizeKey, readableText } from './readable';

describe('readableText', () => {
  it('joins lists, names booleans and leaves nothing as JSON', () => {
    expect(readableText(['itchy', ' red ', ''])).toBe('itchy; red');
    expect(readableText(true, { yes: '是', no: '否' })).toBe('是');
    expect(readableText(null)).toBe('');
    expect(readableText({ id: 'mucosal_involvement', description: 'Sores in the mouth' })).toBe('Sores in the mouth');
    expect(readableText({ name: 'Clotrimazole 1% cream', class: 'azole', route: 'topical', dosage: 'twice daily' })).toBe('Clotrimazole 1% cream (azole, topical, twice daily)');
    expect(readableText({ role: 'user', content: 'A rash' })).toBe('user: A rash');
    expect(readableText({ skin_type: 'dry', sun: null })).toBe('Skin type: dry');
  });

  it('humanizes snake and camel case keys', () => {
    expect(humanizeKey('red_flags')).toBe('Red flags');
    expect(humanizeKey('patientInfo')).toBe('Patient info');
    expect(humanizeKey('主诉')).toBe('主诉');
  });
});

describe('contextRows', () => {
  it('lists the known keys first (blank ones too), opens patient info and keeps extra keys', () => {
    const rows = contextRows({ extra_note: 'gardener', duration: 'two weeks', symptoms: ['rash'], patient_info: { age: 34, allergies: ['penicillin'] } });
    expect(rows.map((row) => row.path)).toEqual([
      'symptoms',
      'location',
      'duration',
      'triggers',
      'patient_info.age',
      'patient_info.allergies',
      'suspected_conditions',
      'image_findings',
      'missing_info',
      'extra_note',
    ]);
    expect(rows.find((row) => row.path === 'patient_info.age')).toEqual({ path: 'patient_info.age', key: 'age', value: 34 });
  });

  it('keeps one patient info row while nothing is known about the patient', () => {
    expect(contextRows({ patient_info: {} }).filter((row) => row.key === 'patient_info')).toHaveLength(1);
  });
});

describe('dossierSections', () => {
  it('turns each part of the dossier into text, rows or a list, leaving the title, date and disclaimer out', () => {
    const sections = dossierSections({
      title: 'Rash',
      created_at: '2026-01-01T00:00:00Z',
      chief_complaint: 'itchy rash',
      risk: { level: 'low', red_flags: [], advice: 'See a doctor if it spreads.' },
      transcript: [{ role: 'user', content: 'A rash' }],
      disclaimer: 'Not a diagnosis.',
    });
    expect(sections).toEqual([
      { key: 'chief_complaint', text: 'itchy rash' },
      {
        key: 'risk',
        rows: [
          { key: 'level', text: 'low' },
          { key: 'red_flags', text: '' },
          { key: 'advice', text: 'See a doctor if it spreads.' },
        ],
      },
      { key: 'transcript', items: ['user: A rash'] },
    ]);
  });
});
