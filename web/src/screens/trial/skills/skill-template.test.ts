import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { RecordCrf } from '../../../api';
import { translate, type Locale, type Translate } from '../../../i18n/translate';
import { newSkillTemplate, templateFieldOf } from './skill-template';

const inLanguage = (locale: Locale): Translate => (key, vars) => translate(locale, key, vars);
const en = inLanguage('en');

const field = (name: string, type: string, identifier = false) => ({ name, label: name.toUpperCase(), type, identifier, choices: [] });
const event = (eventName: string) => ({ eventName, label: eventName, armNum: 1, armName: 'Arm 1', hasData: true, site: null, version: 1, updatedAt: null });

const CRF: RecordCrf = {
  forms: [
    { name: 'demographics', label: 'Demographics', fields: [field('phone', 'text', true), field('dob', 'date', true), field('sex', 'radio')] },
    { name: 'vitals', label: 'Vitals', fields: [field('weight_kg', 'number')] },
  ],
  events: [event('screening_arm_1'), event('baseline_arm_1')],
  values: { screening_arm_1: { sex: '1' }, baseline_arm_1: { weight_kg: 80 } },
  maskedFields: ['phone', 'dob'],
  queryCells: [],
};

describe('the new-skill template', () => {
  it('checks a number field the trial has, at the visit that records it, never an identifier', () => {
    expect(templateFieldOf(CRF)).toEqual({ eventName: 'baseline_arm_1', name: 'weight_kg', label: 'WEIGHT_KG', isNumber: true });
    const yaml = parse(newSkillTemplate('trial-a', templateFieldOf(CRF), en));
    const rule = yaml.nodes.checks.rules[0];
    expect(rule.field).toBe('baseline_arm_1.weight_kg');
    expect(rule.logic).toEqual({ '>=': [{ var: 'baseline_arm_1.weight_kg' }, 0] });
    expect(yaml.projects).toEqual(['trial-a']);
  });

  it('falls back to a filled-in check on another field, and to a named placeholder without a dictionary', () => {
    const noNumbers = { ...CRF, forms: [CRF.forms[0]!] };
    expect(parse(newSkillTemplate('t', templateFieldOf(noNumbers), en)).nodes.checks.rules[0].logic).toEqual({ '!!': [{ var: 'screening_arm_1.sex' }] });
    expect(templateFieldOf(null)).toBeNull();
    expect(newSkillTemplate('t', null, en)).toContain('no data dictionary yet');
  });

  it('writes its comment, name and message in the console\'s language, the rule itself unchanged', () => {
    const zh = newSkillTemplate('trial-a', templateFieldOf(CRF), inLanguage('zh'));
    expect(zh.split('\n')[0]).toBe('# 为 trial-a 新建的质控技能：请修改 id、规则和提示信息。');
    const skill = parse(zh);
    expect(skill.name).toBe('新检查');
    expect(skill.nodes.checks.rules[0].message).toBe('WEIGHT_KG不能为负数');
    const english = parse(newSkillTemplate('trial-a', templateFieldOf(CRF), en));
    expect(english.nodes.checks.rules[0].message).toBe('WEIGHT_KG cannot be negative');
    expect({ ...skill.nodes.checks.rules[0], message: '' }).toEqual({ ...english.nodes.checks.rules[0], message: '' });
  });
});
