import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ClinAgentError } from '../../../core/errors.js';
import { createToolRegistry } from '../../../core/tools/registry.js';
import type { MedicationSearch } from '../types.js';
import { loadFormulary, parseFormulary, shippedFormulary } from './formulary.js';
import { matchConditions, searchMedication } from './search-medication.js';
import { consultMedicationTool, searchMedicationTool } from './tool.js';

const names = (result: MedicationSearch) => result.medications.map((drug) => drug.name);
const offered = (result: MedicationSearch, fragment: string) => names(result).some((name) => name.includes(fragment));
const warningAbout = (result: MedicationSearch, fragment: string) => result.warnings.find((warning) => warning.startsWith(fragment));

describe('the shipped formulary', () => {
  const formulary = shippedFormulary();

  it('loads, names its sources and covers the common conditions in both languages', () => {
    expect(formulary.drugs.length).toBeGreaterThanOrEqual(25);
    expect(formulary.sources.join(' ')).toMatch(/BNF/);
    expect(formulary.sources.join(' ')).toMatch(/WHO Model Formulary/);
    expect(formulary.sources.join(' ')).toMatch(/DailyMed/);
    for (const [english, chinese] of [
      ['eczema', '湿疹'], ['contact dermatitis', '接触性皮炎'], ['acne', '痤疮'], ['tinea', '癣'], ['urticaria', '荨麻疹'], ['impetigo', '脓疱疮'],
      ['cellulitis', '蜂窝织炎'], ['herpes zoster', '带状疱疹'], ['psoriasis', '银屑病'], ['scabies', '疥疮'], ['seborrheic dermatitis', '脂溢性皮炎'], ['rosacea', '玫瑰痤疮'],
    ] as const) {
      expect(matchConditions(formulary, english), english).toEqual(matchConditions(formulary, chinese));
      expect(searchMedication(english, []).medications.length, english).toBeGreaterThan(0);
    }
  });

  it('encodes the classic restrictions', () => {
    const drug = (fragment: string) => formulary.drugs.find((d) => d.name.includes(fragment))!;
    expect(drug('isotretinoin')).toMatchObject({ pregnancy: 'avoid', breastfeeding: 'avoid' });
    expect(drug('doxycycline')).toMatchObject({ pregnancy: 'avoid', minAge: 8, allergyClasses: ['tetracycline'] });
    expect(drug('cephalexin').allergyClasses).toEqual(['cephalosporin']);
    expect(drug('co-trimoxazole').allergyClasses).toContain('sulfonamide');
    expect(formulary.crossReactivity).toContainEqual({ allergy: 'penicillin', excludes: 'cephalosporin', reason: 'cross-reactivity with penicillin allergy' });
  });

  it('refuses a formulary whose references are broken, naming each entry', () => {
    const raw = JSON.parse(JSON.stringify(formulary)) as { drugs: { conditions: string[]; allergyClasses: string[] }[] };
    raw.drugs[0]!.conditions.push('warts');
    raw.drugs[1]!.allergyClasses.push('penicilin');
    const problem = (() => {
      try {
        parseFormulary(raw, 'test.json');
      } catch (error) {
        return error;
      }
    })();
    expect(ClinAgentError.isInstance(problem) && problem.code).toBe('CONFIG_INVALID');
    expect((problem as Error).message).toContain('condition "warts" is not in "conditions"');
    expect((problem as Error).message).toContain('allergy class "penicilin" is not in "allergyClasses"');
  });

  it('reports an unreadable file with its path', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'formulary-'));
    const file = path.join(dir, 'formulary.json');
    writeFileSync(file, '{ not json');
    expect(() => loadFormulary(file)).toThrow(/Cannot read the formulary .*formulary\.json/);
  });
});

describe('searchMedication', () => {
  it('a pregnant patient with acne gets no isotretinoin, adapalene or doxycycline, and the warnings say why', () => {
    for (const result of [searchMedication('acne', ['pregnant']), searchMedication('痤疮', ['孕妇']), searchMedication('acne vulgaris', [], { pregnant: true })]) {
      expect(offered(result, 'isotretinoin')).toBe(false);
      expect(offered(result, 'doxycycline')).toBe(false);
      expect(offered(result, 'adapalene')).toBe(false);
      expect(warningAbout(result, 'isotretinoin')).toMatch(/excluded: avoid in pregnancy \(highly teratogenic/);
      expect(warningAbout(result, 'doxycycline')).toMatch(/excluded: avoid in pregnancy/);
      expect(names(result)).toEqual(expect.arrayContaining(['erythromycin tablets', 'azelaic acid 20% cream / 15% gel']));
    }
  });

  it('the same acne search without pregnancy offers them', () => {
    const result = searchMedication('acne', [], { age: 20 });
    expect(offered(result, 'isotretinoin')).toBe(true);
    expect(offered(result, 'doxycycline')).toBe(true);
    expect(result.warnings).toEqual([]);
  });

  it('a penicillin allergy excludes flucloxacillin, co-amoxiclav (amoxicillin) and cross-reactive cephalexin', () => {
    for (const result of [searchMedication('cellulitis', ['penicillin allergy']), searchMedication('蜂窝织炎', ['青霉素过敏']), searchMedication('cellulitis', [], { allergies: ['amoxicillin'] })]) {
      expect(offered(result, 'flucloxacillin')).toBe(false);
      expect(offered(result, 'amoxicillin')).toBe(false);
      expect(offered(result, 'cephalexin')).toBe(false);
      expect(warningAbout(result, 'flucloxacillin')).toMatch(/excluded: penicillin allergy/);
      expect(warningAbout(result, 'amoxicillin-clavulanate')).toMatch(/excluded: penicillin allergy/);
      expect(warningAbout(result, 'cephalexin')).toBe('cephalexin capsules excluded: cross-reactivity with penicillin allergy.');
      expect(names(result)).toEqual(expect.arrayContaining(['clarithromycin tablets', 'clindamycin capsules']));
    }
  });

  it('a sulfonamide allergy excludes TMP-SMX, in English and Chinese', () => {
    for (const contraindication of ['sulfa allergy', '磺胺过敏', 'allergic to sulfonamides']) {
      const result = searchMedication('cellulitis', [contraindication]);
      expect(offered(result, 'co-trimoxazole'), contraindication).toBe(false);
      expect(warningAbout(result, 'trimethoprim-sulfamethoxazole')).toMatch(/sulfonamide allergy/);
      expect(offered(result, 'flucloxacillin')).toBe(true);
    }
  });

  it('a 5-year-old gets no doxycycline, however the age is written', () => {
    for (const [contraindications, info] of [[['age 5'], {}], [['5岁'], {}], [['child 5 years'], {}], [['5-year-old'], {}], [[], { age: 5 }]] as const) {
      const result = searchMedication('cellulitis', [...contraindications], info);
      expect(offered(result, 'doxycycline'), JSON.stringify(contraindications)).toBe(false);
      expect(warningAbout(result, 'doxycycline')).toContain('not for patients under 8 years; the patient is 5 years');
      expect(result.warnings.at(-1)).toMatch(/dosages are for adults/);
    }
    expect(offered(searchMedication('cellulitis', ['age 9']), 'doxycycline')).toBe(true);
    expect(offered(searchMedication('scabies', ['3个月']), 'permethrin')).toBe(true);
    expect(offered(searchMedication('scabies', ['1 month old']), 'permethrin')).toBe(false);
  });

  it('breastfeeding excludes "avoid" drugs and keeps "caution" drugs with a warning and a note', () => {
    const result = searchMedication('rosacea', ['哺乳期']);
    expect(offered(result, 'ivermectin')).toBe(false);
    expect(offered(result, 'doxycycline')).toBe(false);
    expect(warningAbout(result, 'ivermectin')).toMatch(/excluded: avoid while breastfeeding/);
    const metronidazole = result.medications.find((drug) => drug.name.startsWith('metronidazole'));
    expect(metronidazole?.notes).toMatch(/^Caution while breastfeeding/);
    expect(warningAbout(result, 'metronidazole')).toMatch(/caution while breastfeeding/);
  });

  it('combines several contraindications in one string and across both inputs', () => {
    const result = searchMedication('cellulitis', ['pregnant, allergic to penicillin and sulfa'], { allergies: ['克拉霉素'] });
    for (const excluded of ['flucloxacillin', 'amoxicillin-clavulanate', 'cephalexin', 'trimethoprim', 'doxycycline', 'clarithromycin']) {
      expect(offered(result, excluded), excluded).toBe(false);
      expect(warningAbout(result, excluded), excluded).toBeDefined();
    }
    // A clarithromycin allergy is a macrolide allergy: erythromycin goes too, leaving clindamycin.
    expect(names(result)).toEqual(['clindamycin capsules']);
  });

  it('negated statements are understood and exclude nothing', () => {
    const result = searchMedication('acne', ['not pregnant', '无过敏史', 'no known allergies', '无青霉素过敏']);
    expect(offered(result, 'isotretinoin')).toBe(true);
    expect(result.warnings).toEqual([]);
  });

  it('reports what it does not understand instead of ignoring it', () => {
    const result = searchMedication('eczema', ['liver disease', 'child', 'allergic to latex'], { allergies: ['peanuts'] });
    expect(result.warnings).toContain('Contraindication not understood: "liver disease", check it yourself against each drug below.');
    expect(result.warnings.some((warning) => warning.includes('"child" gives no age'))).toBe(true);
    expect(result.warnings.some((warning) => warning.includes('"allergic to latex" names no drug or drug class'))).toBe(true);
    expect(result.warnings.some((warning) => warning.startsWith('Allergy "peanuts" matches no drug'))).toBe(true);
    expect(result.medications.length).toBeGreaterThan(0);
  });

  it('an unknown condition returns no drugs and a warning listing what is known', () => {
    const result = searchMedication('warts', []);
    expect(result.medications).toEqual([]);
    expect(result.warnings[0]).toMatch(/^No drug in the formulary is listed for "warts"\. Known conditions: eczema\/湿疹; /);
  });

  it('says so when every drug for the condition is contraindicated', () => {
    const result = searchMedication('rosacea', [], { age: 5 });
    expect(result.medications).toEqual([]);
    expect(result.warnings.at(-1)).toMatch(/Every formulary drug for "rosacea" is contraindicated/);
  });
});

describe('matchConditions', () => {
  const formulary = shippedFormulary();
  it('prefers the longer name: rosacea is not acne, psoriasis (牛皮癣) is not tinea', () => {
    expect(matchConditions(formulary, '玫瑰痤疮')).toEqual(['rosacea']);
    expect(matchConditions(formulary, 'acne rosacea')).toEqual(['rosacea']);
    expect(matchConditions(formulary, '牛皮癣')).toEqual(['psoriasis']);
    expect(matchConditions(formulary, 'tinea versicolor')).toEqual(['tinea_versicolor']);
    expect(matchConditions(formulary, '痤疮')).toEqual(['acne']);
  });
  it('matches case-insensitively, inside a longer query, and a partial name', () => {
    expect(matchConditions(formulary, 'ACNE on the face')).toEqual(['acne']);
    expect(matchConditions(formulary, '手上的湿疹')).toEqual(['eczema']);
    expect(matchConditions(formulary, 'eczem')).toEqual(['eczema']);
    expect(matchConditions(formulary, 'ec')).toEqual([]);
  });
});

describe('search_medication tool', () => {
  const registry = createToolRegistry();
  registry.register(searchMedicationTool());

  it('runs with the seed arguments; contraindications default to none', async () => {
    const result = await registry.run('search_medication', { condition: '荨麻疹' });
    expect(result.success).toBe(true);
    expect(names(result.result as MedicationSearch)).toEqual(['cetirizine 10 mg tablets', 'loratadine 10 mg tablets']);
  });

  it('applies patient_info with extra keys passed through', async () => {
    const result = await registry.run('search_medication', { condition: 'acne', contraindications: [], patient_info: { sex: 'F', pregnant: true, weight_kg: 60 } });
    expect(offered(result.result as MedicationSearch, 'isotretinoin')).toBe(false);
  });

  it('refuses an empty condition with a line the model can act on', async () => {
    const result = await registry.run('search_medication', { condition: ' ', contraindications: [] });
    expect(result.success).toBe(false);
    expect(result.error).toContain('condition: name the condition');
  });
});

describe('search_medication bound to a consult', () => {
  it("applies the consult's recorded pregnancy and allergies when the model passes none, and says what it added", async () => {
    const registry = createToolRegistry();
    registry.register(consultMedicationTool(() => ({ pregnant: true, allergies: ['i am allergic to penicillin'] })));
    const call = await registry.run('search_medication', { condition: 'acne' });
    const result = call.result as MedicationSearch & { applied_from_record: string[] };
    expect(names(result).join(' ')).not.toMatch(/isotretinoin|doxycycline|adapalene/);
    expect(result.applied_from_record).toEqual(['pregnant', 'allergy: i am allergic to penicillin']);
    const cellulitis = (await registry.run('search_medication', { condition: 'cellulitis', patient_info: { pregnant: false, allergies: [] } })).result as MedicationSearch;
    expect(names(cellulitis).join(' ')).not.toMatch(/flucloxacillin|co-amoxiclav|cephalexin|doxycycline/);
  });
});
