import { describe, expect, it } from 'vitest';
import { buildPatch, displayRows, displayValue, draftOf } from './context-fields';

describe('displayRows', () => {
  it('lists every editable entry, blank ones included, then the other keys the field holds', () => {
    const rows = displayRows('pico', {
      population: 'Adults with resistant hypertension',
      intervention: 'Renal denervation',
      eligibility: { inclusion: [{ text: 'Age 18-75' }, { text: 'SBP >= 150 mmHg' }] },
    });
    expect(rows).toEqual([
      { path: 'population', text: 'Adults with resistant hypertension' },
      { path: 'intervention', text: 'Renal denervation' },
      { path: 'comparison', text: '' },
      { path: 'outcome', text: '' },
      { path: 'eligibility.inclusion', text: 'Age 18-75; SBP >= 150 mmHg', items: ['Age 18-75', 'SBP >= 150 mmHg'] },
    ]);
  });

  it('lists the inclusion and exclusion criteria one per line, never as one line', () => {
    const rows = displayRows('pico', { eligibility: { inclusion: [{ text: 'Age 18-75', field: 'age', operator: 'between', value: [18, 75] }], exclusion: [{ text: 'Pregnancy' }, { text: 'eGFR < 30' }] } });
    expect(rows.filter((row) => row.path.startsWith('eligibility'))).toEqual([
      { path: 'eligibility.inclusion', text: 'Age 18-75', items: ['Age 18-75'] },
      { path: 'eligibility.exclusion', text: 'Pregnancy; eGFR < 30', items: ['Pregnancy', 'eGFR < 30'] },
    ]);
  });

  it("names the arms after the PICO and leaves the calculator's raw inputs out", () => {
    const data = { method: 'two means', total: 128, perGroup: [64, 64], assumptions: ['mean difference 5', 'no dropout inflation'], inputs: { design: 'two_means', meanDiff: 5, sd: 10 } };
    const rows = displayRows('sampleSize', data, { pico: { intervention: 'Low-salt diet', comparison: 'Usual diet' } });
    expect(rows.find((row) => row.path === 'perGroup')).toEqual({ path: 'perGroup', text: 'Intervention (Low-salt diet): 64; Comparison (Usual diet): 64', items: ['Intervention (Low-salt diet): 64', 'Comparison (Usual diet): 64'] });
    expect(rows.find((row) => row.path === 'assumptions')!.items).toEqual(['mean difference 5', 'no dropout inflation']);
    expect(rows.map((row) => row.path)).not.toContain('inputs');
    expect(JSON.stringify(rows)).not.toContain('meanDiff');
    const single = displayRows('sampleSize', { perGroup: [50, 0] }, { armLabel: (arm) => ({ intervention: '试验组', comparison: '对照组', single: '单组' })[arm] });
    expect(single.find((row) => row.path === 'perGroup')!.text).toBe('单组: 50');
  });

  it('shows nested endpoint entries and keeps sub-keys the editor has no input for', () => {
    const rows = displayRows('endpoints', { primary: { name: 'Office SBP', unit: 'mmHg' }, secondary: [{ name: '24-h ABPM' }] });
    expect(rows).toEqual([
      { path: 'primary.name', text: 'Office SBP' },
      { path: 'primary.measure', text: '' },
      { path: 'primary.timepoint', text: '' },
      { path: 'primary.unit', text: 'mmHg' },
      { path: 'secondary', text: '24-h ABPM', items: ['24-h ABPM'] },
    ]);
  });

  it('shows the fields of an unknown context field as they come', () => {
    expect(displayRows('safety', { monitoring: 'DSMB' })).toEqual([{ path: 'monitoring', text: 'DSMB' }]);
  });
});

describe('displayValue', () => {
  it('joins lists and shows numbers as written', () => {
    expect(displayValue([64, 64])).toBe('64; 64');
    expect(displayValue(0.05)).toBe('0.05');
    expect(displayValue(undefined)).toBe('');
  });
});

describe('buildPatch', () => {
  it('sends only the keys that changed, and leaves blank inputs out', () => {
    const data = { population: 'Adults', intervention: 'Drug A' };
    const draft = { ...draftOf('pico', data), comparison: ' Placebo ', outcome: '' };
    expect(buildPatch('pico', data, draft)).toEqual({ value: { comparison: 'Placebo' }, invalid: [] });
  });

  it('sends numbers as numbers and names an input that is not one', () => {
    const data = { total: 120 };
    expect(buildPatch('sampleSize', data, { ...draftOf('sampleSize', data), total: '128', alpha: 'five percent', power: '0.9' })).toEqual({
      value: { total: 128, power: 0.9 },
      invalid: ['alpha'],
    });
  });

  it('sends an edited nested object whole, keeping its keys the editor does not show', () => {
    const data = { primary: { name: 'Office SBP', unit: 'mmHg' } };
    const draft = { ...draftOf('endpoints', data), 'primary.measure': 'Change from baseline', 'primary.timepoint': 'Week 12' };
    expect(buildPatch('endpoints', data, draft).value).toEqual({
      primary: { name: 'Office SBP', unit: 'mmHg', measure: 'Change from baseline', timepoint: 'Week 12' },
    });
  });

  it('sends nothing when nothing changed', () => {
    const data = { question: 'Does X lower Y?' };
    expect(buildPatch('scientificQuestion', data, draftOf('scientificQuestion', data))).toEqual({ value: {}, invalid: [] });
  });
});
