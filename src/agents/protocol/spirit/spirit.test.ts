import { describe, expect, expectTypeOf, it } from 'vitest';
import { SpiritCoverage as ContractSpiritCoverage } from '../../../contract/protocol-agent.js';
import type { ProtocolContext } from '../context.js';
import { SPIRIT_2025_ITEMS, SPIRIT_2025_ITEM_COUNT, SPIRIT_CONTEXT_MAP, spiritCoverage, type SpiritCoverage } from './index.js';

/** Every context value the mapping reads, filled in. */
const fullContext: ProtocolContext = {
  scientificQuestion: {
    question: '强化降压能否降低卒中复发?',
    background: 'Recurrent stroke is common.',
    rationale: 'Targets are uncertain.',
    objectives: { benefits: 'Lower the 12-month stroke recurrence', harms: 'Compare symptomatic hypotension and falls' },
  },
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
    sequenceGeneration: 'The trial statistician, with a computer random number generator',
    allocationConcealment: 'Central web system, revealed after enrolment',
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
    expect(byId.get('11')!.title).toMatch(/patient or public involvement/);
    expect(byId.get('18')!.title).toMatch(/^Time schedule of enrolment/);
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
      scientificQuestion: { question: 'Q?', background: 'Known.', objectives: { benefits: 'Lower recurrence' } },
      pico: { ...fullContext.pico, comparison: '   ', eligibility: { inclusion: [{ text: 'Adults' }], exclusion: [] } },
      studyDesign: { ...fullContext.studyDesign, visits: [] },
      endpoints: { primary: { name: 'Recurrent stroke' } },
    });

    const open = ids(coverage.open);
    for (const id of ['9a', '10', '15a', '14a', '18', '16']) expect(open).toContain(id);
    expect(ids(coverage.covered)).toEqual(['12', '19', '21a', '21b', '22', '24a']);
  });

  it('counts an item only from a field that answers it: not 22 from the ratio, 21a from a method naming no one, or 10 from the question', () => {
    const coverage = spiritCoverage({
      scientificQuestion: { question: 'Does a low-salt diet lower blood pressure compared with usual diet?' },
      studyDesign: { type: 'Parallel-group randomised trial', allocation: 'Allocation: 1:1', randomization: 'Permuted blocks of 4' },
    });
    expect(ids(coverage.covered)).toEqual(['12', '21b']);
    for (const id of ['10', '21a', '22']) expect(ids(coverage.open)).toContain(id);
    // The fields that do answer them: objectives on benefits and harms, who generates the sequence, the concealment.
    const answered = spiritCoverage({
      scientificQuestion: { objectives: { benefits: 'Lower blood pressure at 12 weeks', harms: 'Hyponatraemia and dizziness' } },
      studyDesign: { sequenceGeneration: 'An independent statistician, computer-generated', allocationConcealment: 'Sequentially numbered opaque sealed envelopes' },
    });
    expect(ids(answered.covered)).toEqual(['10', '21a', '22']);
    // The design item names the allocation ratio: the type alone leaves it open.
    expect(ids(spiritCoverage({ studyDesign: { type: 'Parallel-group randomised trial' } }).covered)).toEqual([]);
  });

  it('titles each item with its full published wording (SPIRIT 2025, BMJ 2025)', () => {
    const title = (id: string) => SPIRIT_2025_ITEMS.find((item) => item.id === id)!.title;
    expect(title('15a')).toBe('Intervention and comparator with sufficient details to allow replication including how, when, and by whom they will be administered. If relevant, where additional materials describing the intervention and comparator (eg, intervention manual) can be accessed');
    expect(title('21b')).toBe('Type of randomisation (simple or restricted) and details of any factors for stratification. To reduce predictability of a random sequence, other details of any planned restriction (eg, blocking) should be provided in a separate document that is unavailable to those who enrol participants or assign interventions');
    expect(title('22')).toBe('Mechanism used to implement the random allocation sequence (eg, central computer/telephone; sequentially numbered, opaque, sealed containers), describing any steps to conceal the sequence until interventions are assigned');
    expect(title('25a')).toBe('Plans for assessment and collection of trial data, including any related processes to promote data quality (eg, duplicate measurements, training of assessors) and a description of trial instruments (eg, questionnaires, laboratory tests) along with their reliability and validity, if known. Reference to where data collection forms can be accessed, if not in the protocol');
    expect(title('26')).toBe('Plans for data entry, coding, security, and storage, including any related processes to promote data quality (eg, double data entry; range checks for data values). Reference to where details of data management procedures can be accessed, if not in the protocol');
    expect(title('28a')).toBe('Composition of data monitoring committee (DMC); summary of its role and reporting structure; statement of whether it is independent from the sponsor and funder; conflicts of interest and reference to where further details about its charter can be found, if not in the protocol. Alternatively, an explanation of why a DMC is not needed');
    expect(title('10')).toBe('Specific objectives related to benefits and harms');
  });

  it('answers in the shape of the HTTP contract', () => {
    expectTypeOf<SpiritCoverage>().toExtend<ContractSpiritCoverage>();
    expectTypeOf<ContractSpiritCoverage>().toExtend<SpiritCoverage>();
    const coverage = spiritCoverage(fullContext);

    expect(ContractSpiritCoverage.parse(coverage)).toEqual(coverage);
  });
});
