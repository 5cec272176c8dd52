import { describe, expect, it } from 'vitest';
import { missingFields } from './missing.js';

describe('missingFields', () => {
  it('names the required PICO fields not said yet, in order', () => {
    expect(missingFields('pico', { population: 'Adults after stroke', intervention: '', outcome: '  ' })).toEqual(['intervention', 'comparison', 'outcome']);
  });

  it('reads nested required fields and counts a zero total as said', () => {
    expect(missingFields('endpoints', { primary: { timepoint: '12 months' } })).toEqual(['primary endpoint']);
    expect(missingFields('endpoints', { primary: { name: 'Recurrent stroke' } })).toEqual([]);
    expect(missingFields('sampleSize', { total: 0 })).toEqual(['method']);
  });

  it('names everything for a stage with no data, and nothing for a context field with no required fields', () => {
    expect(missingFields('scientificQuestion', undefined)).toEqual(['research question']);
    expect(missingFields('studyDesign', {})).toEqual(['design type']);
    expect(missingFields('budget', {})).toEqual([]);
  });
});
