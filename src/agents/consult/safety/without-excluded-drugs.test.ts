import { describe, expect, it } from 'vitest';
import { patientExclusions } from './patient-exclusions.js';
import { splitSentences, withoutExcludedDrugs, withoutExcludedOptions } from './without-excluded-drugs.js';

const pregnant = patientExclusions({ patient_info: { pregnant: true } }, []);

describe('patientExclusions', () => {
  it('reads pregnancy from the record or the patient\'s words, and excludes the formulary drugs and unlisted class members', () => {
    for (const exclusions of [pregnant, patientExclusions({}, ['I am pregnant and my face is breaking out']), patientExclusions({}, ['我怀孕了'])]) {
      const drugs = exclusions.drugs.map((drug) => drug.drug);
      expect(drugs).toEqual(expect.arrayContaining(['isotretinoin capsules', 'doxycycline capsules', 'adapalene 0.1% gel', 'minocycline', 'tretinoin']));
      expect(drugs).not.toContain('azelaic acid 20% cream / 15% gel');
      expect(exclusions.facts.pregnant).toBe(true);
    }
    expect(patientExclusions({}, ['I am not pregnant']).drugs).toEqual([]);
  });

  it("reads an allergy the patient stated, in either language, with its cross-reactive class; a denial is not an allergy", () => {
    for (const said of ['I am allergic to penicillin', '我青霉素过敏', 'allergic to amoxicillin']) {
      const exclusions = patientExclusions({}, [said]);
      expect(exclusions.facts.allergies).toContain('penicillin');
      const drugs = exclusions.drugs.map((drug) => drug.drug);
      expect(drugs).toEqual(expect.arrayContaining(['flucloxacillin capsules', 'cephalexin capsules', 'ceftriaxone']));
      expect(exclusions.drugs.find((drug) => drug.drug === 'cephalexin capsules')!.reasons).toEqual(['cross-reactivity with penicillin allergy']);
    }
    const denied = patientExclusions({}, ['No allergies that I know of.', 'not allergic to penicillin']);
    expect(denied.drugs).toEqual([]);
    expect(denied.facts).toMatchObject({ allergies: [], deniesAllergies: true });
    expect(patientExclusions({}, ['It itches.']).facts.deniesAllergies).toBe(false);
  });

  it('applies breastfeeding and age: tetracyclines while breastfeeding, retinoids under 12, adapalene only cautioned', () => {
    const feeding = patientExclusions({ patient_info: { breastfeeding: true } }, []).drugs.map((drug) => drug.drug);
    expect(feeding).toEqual(expect.arrayContaining(['doxycycline capsules', 'minocycline', 'isotretinoin capsules']));
    expect(feeding).not.toContain('adapalene 0.1% gel');
    const child = patientExclusions({ patient_info: { age: 10 } }, []).drugs.map((drug) => drug.drug);
    expect(child).toEqual(expect.arrayContaining(['isotretinoin capsules', 'tretinoin']));
    expect(child).not.toContain('doxycycline capsules');
  });
});

describe('withoutExcludedDrugs', () => {
  it('replaces each sentence naming an excluded drug by generic, brand or Chinese name, and keeps the rest', () => {
    const checked = withoutExcludedDrugs('Use azelaic acid 20% cream twice daily. Roaccutane 0.5 mg/kg is for severe acne; minocycline also works!\nSee a doctor if it spreads.', pregnant);
    expect(checked.text).toBe('Use azelaic acid 20% cream twice daily. ⚠️ A medicine in this answer is not suitable for you (avoid in pregnancy) and was taken out. Do not take it; ask a doctor or pharmacist before taking any medicine.\nSee a doctor if it spreads.');
    expect(checked.removed).toEqual([
      { drug: 'isotretinoin capsules', said: 'roaccutane', reason: expect.stringMatching(/^avoid in pregnancy \(highly teratogenic/) },
      { drug: 'minocycline', said: 'minocycline', reason: expect.stringMatching(/^avoid in pregnancy \(tetracyclines/) },
    ]);
    const chinese = withoutExcludedDrugs('可以外用壬二酸乳膏。泰尔丝效果好。多西环素也行。', pregnant);
    expect(chinese.text).toBe('可以外用壬二酸乳膏。⚠️ 回答中提到的一种药物不适合您（孕期禁用），已删除。请勿自行用药，用药前请咨询医生或药师。');
    expect(chinese.removed.map((removed) => removed.said)).toEqual(['泰尔丝', '多西环素']);
  });

  it('takes out a mention that reads as a warning too: a negation written by a model is not trusted', () => {
    expect(withoutExcludedDrugs('You need not avoid isotretinoin.', pregnant).removed).toHaveLength(1);
  });

  it('leaves a text it already checked as it is, the allergy named in its warning included', () => {
    const allergic = patientExclusions({ patient_info: { allergies: ['penicillin'] } }, []);
    const once = withoutExcludedDrugs('Flucloxacillin is the usual choice. Clarithromycin is an alternative.', allergic);
    expect(once.removed).toHaveLength(1);
    expect(withoutExcludedDrugs(once.text, allergic)).toEqual({ text: once.text, removed: [] });
  });

  it('changes nothing for a patient with no exclusions, nor a drug name inside another word', () => {
    const none = patientExclusions({}, []);
    expect(withoutExcludedDrugs('Isotretinoin is an option.', none)).toEqual({ text: 'Isotretinoin is an option.', removed: [] });
    expect(withoutExcludedDrugs('The antiretinoidal effect is unrelated.', pregnant).removed).toEqual([]);
  });

  it('drops quick options that name an excluded drug', () => {
    expect(withoutExcludedOptions(['Tell me about Accutane', 'Azelaic acid', '异维A酸'], pregnant).options).toEqual(['Azelaic acid']);
  });
});

describe('splitSentences', () => {
  it('ends a sentence at a full stop before a space, not inside a dose', () => {
    expect(splitSentences('Take 0.5 mg daily. Then stop；再看。')).toEqual(['Take 0.5 mg daily.', ' Then stop；', '再看。']);
  });
});
