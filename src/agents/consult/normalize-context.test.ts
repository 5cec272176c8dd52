import { describe, expect, it } from 'vitest';
import { normalizeMedicalContext } from './normalize-context.js';

describe('normalizeMedicalContext', () => {
  it('reads the shapes models write into the consult shape', () => {
    expect(
      normalizeMedicalContext({
        location: 'left forearm',
        duration: 3,
        symptoms: [{ name: 'rash' }, { name: 'itch', severity: 'mild' }, 'scaling', null],
        triggers: { name: 'new soap' },
        patient_info: { age: '34岁', sex: '女', pregnant: 'yes', breastfeeding: 'possibly', allergies: 'penicillin, 磺胺' },
        suspected_conditions: 'contact dermatitis',
        seen_by: 'GP',
      }),
    ).toEqual({
      location: ['left forearm'],
      duration: '3',
      symptoms: ['rash', 'itch (severity: mild)', 'scaling'],
      triggers: ['new soap'],
      patient_info: { age: 34, sex: 'female', pregnant: true, breastfeeding: true, allergies: ['penicillin', '磺胺'] },
      suspected_conditions: ['contact dermatitis'],
      seen_by: 'GP',
    });
  });

  it('leaves out what cannot be read instead of throwing, whatever the value', () => {
    const odd: unknown[] = [null, undefined, 7, 'text', [], [1, [2]], { a: { b: {} } }, true, Number.NaN];
    for (const value of odd) {
      expect(() => normalizeMedicalContext(value)).not.toThrow();
      for (const field of ['symptoms', 'location', 'duration', 'patient_info', 'image_findings']) expect(() => normalizeMedicalContext({ [field]: value })).not.toThrow();
    }
    expect(normalizeMedicalContext({ patient_info: { age: 'unknown', pregnant: 'n/a' }, symptoms: [] })).toEqual({ patient_info: {} });
    expect(normalizeMedicalContext({ patient_info: { age: '6 months' } }).patient_info?.age).toBe(0.5);
  });

  it('drops names, phone numbers, ID numbers, addresses and e-mail under any key at any depth, keeping the clinical rest', () => {
    const context = normalizeMedicalContext({
      symptoms: [{ name: 'rash', phone: '13812345678' }, 'itch'],
      patient_full_name: 'Zhang Wei',
      home_phone: '13812345678',
      residential_address: '12 Nanjing Road',
      identity_card: '110101 19900307 1234',
      patient_info: { age: 34, name: 'Zhang Wei', phone: '021 6234 5678', note: 'My name is Zhang Wei, gardener' },
      additional_information: { emergency_contact: { relation: 'wife', name: 'Li Na', mobile: '139 0000 1111' }, landline: '010-87654321', contact: 'zhang@example.com', occupation: 'gardener' },
    });
    expect(context).toEqual({
      symptoms: ['rash', 'itch'],
      patient_info: { age: 34, note: 'My name is [identifier removed], gardener' },
      additional_information: { emergency_contact: { relation: 'wife' }, occupation: 'gardener' },
    });
  });
});
