import { describe, expect, it } from 'vitest';
import { createToolRegistry } from '../../../core/tools/registry.js';
import { ADVICE, assessRisk, LEVEL_THRESHOLDS, levelOf, POINTS } from './assess-risk.js';
import { affirms, terms } from './clinical-text.js';
import { RED_FLAG_RULES } from './red-flags.js';
import { assessRiskTool } from './tool.js';

const flagIds = (symptoms: string[], context?: { duration?: string; location?: string[] }) => assessRisk(symptoms, {}, context).red_flags.map((flag) => flag.id);

describe('assessRisk: each red flag, in English and in Chinese', () => {
  const cases: { flag: string; english: string[]; chinese: string[]; level: 'urgent' | 'high' }[] = [
    { flag: 'fever_with_widespread_rash', english: ['fever', 'rash all over my body'], chinese: ['发烧39℃', '全身起红疹'], level: 'urgent' },
    { flag: 'fever_with_blistering_rash', english: ['temperature 38.5', 'blisters on the arms'], chinese: ['高烧不退', '起了很多水疱'], level: 'urgent' },
    { flag: 'mucosal_involvement', english: ['red rash on the chest', 'mouth ulcers'], chinese: ['身上有皮疹', '口腔溃烂'], level: 'urgent' },
    { flag: 'abcde_changing_pigmented_lesion', english: ['a mole on my back', 'it is getting bigger', 'irregular border'], chinese: ['背上的黑痣', '最近变大', '边缘不规则'], level: 'high' },
    { flag: 'spreading_painful_redness_with_fever', english: ['red swollen leg', 'spreading rapidly', 'very painful', 'fever'], chinese: ['小腿红肿', '迅速扩散', '疼痛', '发热'], level: 'urgent' },
    { flag: 'facial_swelling_with_breathing_trouble', english: ['swollen lips', 'difficulty breathing'], chinese: ['面部肿胀', '喘不过气'], level: 'urgent' },
  ];
  for (const { flag, english, chinese, level } of cases) {
    it(`${flag} (${level})`, () => {
      for (const symptoms of [english, chinese]) {
        const result = assessRisk(symptoms, {});
        expect(result.red_flags.map((f) => f.id), symptoms.join(', ')).toContain(flag);
        expect(result.risk_level, symptoms.join(', ')).toBe(level);
        expect(result.advice).toBe(ADVICE[level]);
      }
    });
  }

  it('every red flag has a description, and an emergency flag makes the consult urgent', () => {
    for (const rule of RED_FLAG_RULES) expect(rule.description.length).toBeGreaterThan(20);
    expect(assessRisk(['hives', "I can't breathe"], {}).risk_level).toBe('urgent');
    expect(flagIds(['hives', '呼吸困难'])).toEqual(['breathing_difficulty']);
  });

  it('reads a rash described as red dots or bumps', () => {
    expect(flagIds(['孩子发烧', '身上很多红点', '遍布全身'])).toContain('fever_with_widespread_rash');
    expect(flagIds(['fever', 'red bumps everywhere'])).toContain('fever_with_widespread_rash');
  });

  it('reads the locations: three body regions are widespread, a mucosal site among them counts for a sore', () => {
    expect(flagIds(['fever', 'red spots'], { location: ['arms', 'back', 'legs'] })).toContain('fever_with_widespread_rash');
    expect(flagIds(['fever', 'red spots'], { location: ['arms'] })).not.toContain('fever_with_widespread_rash');
    expect(flagIds(['rash', 'ulcers'], { location: ['lips'] })).toContain('mucosal_involvement');
  });

  it('a single mouth ulcer alone is not the SJS red flag, but mouth and eye sores together are', () => {
    expect(flagIds(['口腔溃疡'])).toEqual([]);
    expect(flagIds(['mouth sores', 'eye sores'])).toContain('mucosal_involvement');
  });

  it('the changing mole stays high when combined with lesser findings, and becomes urgent with an emergency sign', () => {
    const mole = ['黑痣变大', '边缘不规则', '颜色不均', '出血'];
    expect(assessRisk(mole, { age: 80, pregnant: true }).risk_level).toBe('high');
    expect(assessRisk([...mole, 'fever'], { age: 80 }).score).toBe(69);
    expect(assessRisk([...mole, 'swollen face', 'trouble breathing'], {}).risk_level).toBe('urgent');
  });
});

describe('assessRisk: negation does not fire a flag', () => {
  for (const negated of ['no fever', 'denies fever', 'without any fever', "doesn't have a fever", 'fever: no', '没有发烧', '不发烧', '无发热', '无明显发热', '否认发热', '发热：无']) {
    it(`"${negated}" is not fever`, () => {
      const result = assessRisk([negated, 'rash all over the body', 'blisters'], {});
      expect(result.red_flags.map((f) => f.id)).not.toContain('fever_with_widespread_rash');
      expect(result.red_flags.map((f) => f.id)).not.toContain('fever_with_blistering_rash');
      expect(result.risk_level).not.toBe('urgent');
    });
  }

  it('"afebrile" is not febrile, and the negation stops at a comma or "but"', () => {
    expect(flagIds(['afebrile', 'widespread rash'])).toEqual([]);
    expect(flagIds(['no cough, but fever', 'widespread rash'])).toContain('fever_with_widespread_rash');
    expect(flagIds(['没有咳嗽，发烧', '全身皮疹'])).toContain('fever_with_widespread_rash');
  });

  it('pseudo-negations still affirm the sign ("无明显诱因发热", "不断扩散", "非常痛", "无法呼吸")', () => {
    expect(flagIds(['不断扩散的红肿', '非常痛', '无明显诱因发热'])).toContain('spreading_painful_redness_with_fever');
    expect(flagIds(['嘴唇肿', '无法呼吸'])).toContain('facial_swelling_with_breathing_trouble');
    expect(flagIds(['not sure if fever', 'rash everywhere'])).toContain('fever_with_widespread_rash');
  });

  it('negated breathing trouble and swelling are not angioedema', () => {
    expect(flagIds(['no difficulty breathing', 'lip swelling'])).toEqual([]);
    expect(flagIds(['没有呼吸困难', '嘴唇肿'])).toEqual([]);
    expect(flagIds(['一颗痣', '没有变大', '颜色没有变化'])).toEqual([]);
  });

  it('the negation window is short: a cue far before the term does not deny it', () => {
    const fever = terms('fever', ['fevers?', '发烧']);
    expect(affirms('no rash on the arms or the legs, and fever', fever)).toBe(true);
    expect(affirms('no fever', fever)).toBe(false);
    expect(affirms('没有去医院看过也一直在发烧', fever)).toBe(true);
  });
});

describe('assessRisk: mild complaints and the scoring table', () => {
  it('mild, local, long-standing complaints stay low', () => {
    for (const symptoms of [['itchy', 'dry patch on the elbow'], ['a few spots on the arm'], ['痒', '手肘一块干燥脱屑', '几个小红点'], ['头皮屑多', '有点痒']]) {
      const result = assessRisk(symptoms, { age: 30 }, { duration: 'several months', location: ['elbow'] });
      expect(result, symptoms.join(', ')).toMatchObject({ risk_level: 'low', score: 0, red_flags: [] });
      expect(result.advice).toBe(ADVICE.low);
    }
  });

  it('levels follow the thresholds in order, and every score maps to exactly one level', () => {
    const mins = LEVEL_THRESHOLDS.map((threshold) => threshold.minScore);
    expect(mins).toEqual([...mins].sort((a, b) => b - a));
    const order = ['low', 'moderate', 'high', 'urgent'];
    let previous = 0;
    for (let score = 0; score <= 100; score++) {
      const rank = order.indexOf(levelOf(score));
      expect(rank).toBeGreaterThanOrEqual(previous);
      previous = rank;
    }
    expect([levelOf(14), levelOf(15), levelOf(34), levelOf(35), levelOf(69), levelOf(70)]).toEqual(['low', 'moderate', 'moderate', 'high', 'high', 'urgent']);
  });

  it('is monotonic: adding a symptom never lowers the score or the level', () => {
    const pool = ['fever', 'rash all over', 'blisters', 'mouth ulcers', 'mole getting bigger', 'irregular border', 'redness spreading', 'painful', 'hives', 'swollen lips', 'itchy', 'dry skin'];
    const rank = (level: string) => ['low', 'moderate', 'high', 'urgent'].indexOf(level);
    let symptoms: string[] = [];
    let before = assessRisk(symptoms, {});
    for (const symptom of pool) {
      symptoms = [...symptoms, symptom];
      const after = assessRisk(symptoms, {});
      expect(after.score, symptom).toBeGreaterThanOrEqual(before.score);
      expect(rank(after.risk_level), symptom).toBeGreaterThanOrEqual(rank(before.risk_level));
      before = after;
    }
    expect(before.score).toBe(100);
  });

  it('scores single findings as the table says', () => {
    expect(assessRisk(['fever'], {}).score).toBe(POINTS.fever);
    expect(assessRisk(['redness spreading'], {}).score).toBe(POINTS.spreadingRedness);
    expect(assessRisk(['redness spreading', 'painful'], {}).score).toBe(POINTS.spreadingRedness + POINTS.painfulSpreadingRedness);
    expect(assessRisk(['mole', 'growing'], {}).score).toBe(POINTS.changingPigmentedLesion);
    expect(assessRisk(['fever', 'widespread rash'], {}).score).toBe(POINTS.emergencyRedFlag + POINTS.fever + POINTS.widespreadRash);
  });

  it('pregnancy and age under 2 or over 75 raise the score', () => {
    const symptoms = ['redness spreading'];
    const base = assessRisk(symptoms, { age: 30 });
    expect(base.risk_level).toBe('low');
    const pregnant = assessRisk(symptoms, { age: 30, pregnant: true });
    expect(pregnant.score).toBe(base.score + POINTS.pregnant);
    expect(pregnant.risk_level).toBe('moderate');
    expect(assessRisk(symptoms, { age: 1 }).score).toBe(base.score + POINTS.ageExtreme);
    expect(assessRisk(symptoms, { age: 80 }).score).toBe(base.score + POINTS.ageExtreme);
    expect(assessRisk(symptoms, { age: 75 }).score).toBe(base.score);
    expect(assessRisk(symptoms, { pregnant: false }).score).toBe(base.score);
  });

  it('no symptoms yet (early in a consult) is low, not an error', () => {
    expect(assessRisk([], {})).toMatchObject({ risk_level: 'low', score: 0, red_flags: [] });
  });
});

describe('assess_risk tool', () => {
  const registry = createToolRegistry();
  registry.register(assessRiskTool());

  it('runs with the seed arguments, passes extra patient_info keys and reads Chinese sex labels', async () => {
    const result = await registry.run('assess_risk', { symptoms: ['发烧', '全身皮疹'], patient_info: { age: 30, sex: '女', pregnant: true, smoker: false } });
    expect(result.success).toBe(true);
    expect(result.result).toMatchObject({ risk_level: 'urgent', red_flags: [{ id: 'fever_with_widespread_rash' }] });
    expect(result.arguments).toMatchObject({ patient_info: { smoker: false } });
  });

  it('accepts the consult context (duration, location) and a missing patient_info', async () => {
    const result = await registry.run('assess_risk', JSON.stringify({ symptoms: ['fever', 'spots'], location: ['arms', 'trunk', 'legs'], duration: '2 days' }));
    expect(result.result).toMatchObject({ risk_level: 'urgent' });
  });

  it('refuses empty symptoms and a bad age with a line the model can act on', async () => {
    const empty = await registry.run('assess_risk', { symptoms: [], patient_info: {} });
    expect(empty.success).toBe(false);
    expect(empty.error).toContain('symptoms: list at least one symptom');
    const age = await registry.run('assess_risk', { symptoms: ['itch'], patient_info: { age: -3 } });
    expect(age.error).toContain('patient_info.age: age is in years and cannot be negative');
  });

  it('publishes a JSON schema with the seed argument names', () => {
    const [spec] = registry.specs(['assess_risk']);
    expect(Object.keys((spec!.parameters as { properties: object }).properties)).toEqual(expect.arrayContaining(['symptoms', 'patient_info']));
    expect((spec!.parameters as { required: string[] }).required).toEqual(['symptoms']);
  });
});
