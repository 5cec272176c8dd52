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
      { path: 'eligibility', text: 'inclusion: Age 18-75; SBP >= 150 mmHg' },
    ]);
  });

  it('shows nested endpoint entries and keeps sub-keys the editor has no input for', () => {
    const rows = displayRows('endpoints', { primary: { name: 'Office SBP', unit: 'mmHg' }, secondary: [{ name: '24-h ABPM' }] });
    expect(rows).toEqual([
      { path: 'primary.name', text: 'Office SBP' },
      { path: 'primary.measure', text: '' },
      { path: 'primary.timepoint', text: '' },
      { path: 'primary.unit', text: 'mmHg' },
      { path: 'secondary', text: '24-h ABPM' },
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
