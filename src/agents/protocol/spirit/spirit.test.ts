import { describe, expect, expectTypeOf, it } from 'vitest';
import { SpiritCoverage as ContractSpiritCoverage } from '../../../contract/protocol-agent.js';
import type { ProtocolContext } from '../context.js';
import { SPIRIT_2025_ITEMS, SPIRIT_2025_ITEM_COUNT, SPIRIT_CONTEXT_MAP, spiritCoverage, type SpiritCoverage } from './index.js';

/** Every context value the mapping reads, filled in. */
const fullContext: ProtocolContext = {
  scientificQuestion: { question: '强化降压能否降低卒中复发?', background: 'Recurrent stroke is common.', rationale: 'Targets are uncertain.' },
  pico: {
    population: 'Adults after ischaemic stroke',
    intervention: 'SBP target < 120 mmHg',
    comparison: 'SBP target < 140 mmHg',
    outcome: 'Recurrent stroke',
    eligibility: { inclusion: [{ text: 'Age ≥ 18 years' }], exclusion: [{ text: 'Pregnancy' }] },
  },
  studyDesign: {
    type: 'Parallel-group randomised trial',
    allocation: 'Central web system',
    blinding: 'Outcome assessors',
    randomization: 'Computer-generated, blocks stratified by site',
    visits: [{ name: 'Baseline', day: 0 }],
  },
  sampleSize: { method: 'Two proportions', total: 1200, assumptions: ['alpha 0.05', 'power 0.9'] },
  endpoints: { primary: { name: 'Recurrent stroke', measure: 'Proportion with an event', timepoint: '12 months' } },
};

const ids = (items: Array<{ id: string }>) => items.map((item) => item.id);

describe('the SPIRIT 2025 checklist', () => {
  it('has the 34 numbered items of the publication, each once, in order, with 53 rows counting sub-items', () => {
    const numbers = SPIRIT_2025_ITEMS.map((item) => Number(/^(\d+)[a-d]?$/.exec(item.id)![1]));
    expect([...new Set(numbers)]).toEqual(Array.from({ length: SPIRIT_2025_ITEM_COUNT }, (_, index) => index + 1));
    expect(SPIRIT_2025_ITEM_COUNT).toBe(34);
    expect(SPIRIT_2025_ITEMS).toHaveLength(53);
    expect(new Set(ids([...SPIRIT_2025_ITEMS])).size).toBe(53);
  });

  it('numbers the sub-items as published (a, b, c, d without gaps)', () => {
    const subItems = SPIRIT_2025_ITEMS.filter((item) => /[a-d]$/.test(item.id)).map((item) => item.id);
    expect(subItems).toEqual([
      '1a', '1b', '3a', '3b', '3c', '3d', '7a', '7b', '9a', '9b', '14a', '14b', '15a', '15b', '15c', '15d',
      '21a', '21b', '24a', '24b', '24c', '25a', '25b', '27a', '27b', '27c', '27d', '28a', '28b', '32a', '32b',
    ]);
  });

  it('places the items that moved in 2025 where the publication does', () => {
    const byId = new Map(SPIRIT_2025_ITEMS.map((item) => [item.id, item]));
    expect(byId.get('4')!.section).toBe('Open science');
    expect(byId.get('11')!.title).toMatch(/patients or the public/);
    expect(byId.get('18')!.title).toMatch(/^Participant timeline/);
    expect(byId.get('19')!.title).toMatch(/sample size/);
    expect(byId.get('34')!.section).toBe('Ethics');
  });
});

describe('spiritCoverage', () => {
  it('leaves every item open for an empty context', () => {
    const coverage = spiritCoverage({});

    expect(coverage.total).toBe(53);
    expect(coverage.covered).toEqual([]);
    expect(ids(coverage.open)).toEqual(ids([...SPIRIT_2025_ITEMS]));
  });

  it('covers every mapped item, naming the context fields that answer it, when all of them are filled', () => {
    const coverage = spiritCoverage(fullContext);

    expect(ids(coverage.covered)).toEqual(['9a', '10', '12', '14a', '15a', '16', '18', '19', '21a', '21b', '22', '24a']);
    expect(ids(coverage.covered).sort()).toEqual(Object.keys(SPIRIT_CONTEXT_MAP).sort());
    expect(coverage.covered.find((item) => item.id === '15a')!.from).toEqual(['pico.intervention', 'pico.comparison']);
    expect(coverage.covered.length + coverage.open.length).toBe(coverage.total);
    expect(ids(coverage.open)).toContain('9b');
  });

  it('keeps an item open while any one of its values is missing, blank or an empty list', () => {
    const coverage = spiritCoverage({
      ...fullContext,
      scientificQuestion: { question: 'Q?', background: 'Known.' },
      pico: { ...fullContext.pico, comparison: '   ', eligibility: { inclusion: [{ text: 'Adults' }], exclusion: [] } },
      studyDesign: { ...fullContext.studyDesign, visits: [] },
      endpoints: { primary: { name: 'Recurrent stroke' } },
    });

    const open = ids(coverage.open);
    for (const id of ['9a', '15a', '14a', '18', '16']) expect(open).toContain(id);
    expect(ids(coverage.covered)).toEqual(['10', '12', '19', '21a', '21b', '22', '24a']);
  });

  it('answers in the shape of the HTTP contract', () => {
    expectTypeOf<SpiritCoverage>().toExtend<ContractSpiritCoverage>();
    expectTypeOf<ContractSpiritCoverage>().toExtend<SpiritCoverage>();
    const coverage = spiritCoverage(fullContext);

    expect(ContractSpiritCoverage.parse(coverage)).toEqual(coverage);
  });
});
