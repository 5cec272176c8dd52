import JSZip from 'jszip';
import { SaxesParser } from 'saxes';
import { describe, expect, it } from 'vitest';
import { PROTOCOL_STAGES, type ProtocolContext } from '../context.js';
import { protocolDocx, protocolMarkdown, type ProtocolDraft } from './index.js';

const stages = (completed: string[]): ProtocolDraft['stages'] =>
  PROTOCOL_STAGES.map((stage) => ({ stageId: stage.id, stageName: stage.title, contextField: stage.field, completed: completed.includes(stage.id) }));

/** A protocol half way: the question done, PICO without a comparison or outcome, no sample size method yet. */
const partialContext: ProtocolContext = {
  scientificQuestion: { question: '强化降压能否降低缺血性卒中后的复发风险?', background: 'Recurrence after stroke is common.' },
  pico: {
    population: '发病 7 天内的缺血性卒中患者',
    intervention: 'Systolic target < 120 mmHg',
    eligibility: {
      inclusion: [{ text: 'Age 18 to 80 years', field: 'age', operator: 'between', value: [18, 80], unit: 'years' }, { text: '签署知情同意书' }],
      exclusion: [{ text: 'Intracranial haemorrhage' }],
    },
  },
  studyDesign: {
    type: 'Parallel-group randomised trial',
    visits: [
      { name: 'Baseline', day: 0 },
      { name: 'Month 3', day: 90, windowBefore: 7, windowAfter: 14, event: 'month_3_arm_1' },
    ],
  },
  sampleSize: { total: 1200, perGroup: [600, 600], alpha: 0.05, power: 0.9, assumptions: ['Recurrence 10% vs 7%', '10% dropout'] },
  endpoints: { primary: { name: 'Recurrent stroke', measure: 'Proportion of participants', timepoint: '12 months' }, secondary: [{ name: '全因死亡', timepoint: '12 months' }] },
};

const partial: ProtocolDraft = {
  title: 'INTENSE-BP 卒中二级预防',
  context: partialContext,
  stages: stages(['scientific_question']),
  generatedAt: new Date('2026-03-01T08:00:00Z'),
};

/** The stage section of a Markdown export, from its heading to the next second-level heading. */
function section(markdown: string, heading: string): string {
  const start = markdown.indexOf(`\n## ${heading}`);
  expect(start, `section "${heading}"`).toBeGreaterThanOrEqual(0);
  const end = markdown.indexOf('\n## ', start + 1);
  return markdown.slice(start, end < 0 ? undefined : end);
}

async function documentXml(buffer: Buffer): Promise<string> {
  const zip = await JSZip.loadAsync(buffer);
  return zip.file('word/document.xml')!.async('string');
}

/** The text of a WordprocessingML document, one line per paragraph. */
function paragraphsOf(xml: string): string[] {
  return xml
    .split('</w:p>')
    .map((paragraph) => [...paragraph.matchAll(/<w:t(?: [^>]*)?>([^<]*)<\/w:t>/g)].map((match) => match[1]).join(''))
    .map((text) => text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&'));
}

describe('protocolMarkdown', () => {
  it('writes a section per stage in stage order, with labelled fields, numbered criteria and the visit table', () => {
    const markdown = protocolMarkdown(partial);

    const headings = markdown.split('\n').filter((line) => line.startsWith('## '));
    expect(headings).toEqual([
      '## 1. Scientific question',
      '## 2. PICO (draft)',
      '## 3. Study design (draft)',
      '## 4. Sample size (draft)',
      '## 5. Endpoints (draft)',
      '## SPIRIT 2025 items still open',
    ]);
    expect(markdown.startsWith('# INTENSE-BP 卒中二级预防\n')).toBe(true);
    const pico = section(markdown, '2. PICO');
    expect(pico).toContain('**Population:** 发病 7 天内的缺血性卒中患者');
    expect(pico).toContain('### Inclusion criteria\n\n1. Age 18 to 80 years (check: age between 18 and 80 years)\n2. 签署知情同意书');
    expect(pico).toContain('### Exclusion criteria\n\n1. Intracranial haemorrhage');
    expect(section(markdown, '3. Study design')).toContain(
      '| Visit | Day | Window (days) | EDC event |\n| --- | --- | --- | --- |\n| Baseline | 0 | — |  |\n| Month 3 | 90 | -7 / +14 | month\\_3\\_arm\\_1 |',
    );
    const sampleSize = section(markdown, '4. Sample size');
    for (const line of ['**Per group:** intervention (Systolic target \\< 120 mmHg): 600; comparison: 600', '**Total:** 1200', '**Alpha:** 0.05', '**Power:** 90%', '- Recurrence 10% vs 7%']) {
      expect(sampleSize).toContain(line);
    }
    const endpoints = section(markdown, '5. Endpoints');
    expect(endpoints).toContain('**Primary endpoint:** Recurrent stroke');
    expect(endpoints).toContain('**Timepoint:** 12 months');
    expect(endpoints).toContain('1. 全因死亡: at 12 months');
  });

  it('marks each stage that is still a draft and names the required fields it misses', () => {
    const markdown = protocolMarkdown(partial);

    expect(section(markdown, '1. Scientific question')).not.toMatch(/Missing|Draft/);
    expect(section(markdown, '2. PICO')).toContain('> **Draft:**');
    expect(section(markdown, '2. PICO')).toContain('> **Missing:** comparison, outcome');
    expect(section(markdown, '4. Sample size')).toContain('> **Missing:** method');
    expect(section(markdown, '3. Study design')).not.toContain('Missing');
    expect(section(markdown, '5. Endpoints')).not.toContain('Missing');
  });

  it('ends with the SPIRIT 2025 items still open, and leaves out the ones the context answers', () => {
    const spirit = section(protocolMarkdown(partial), 'SPIRIT 2025 items still open');

    expect(spirit).toContain('The protocol answers 3 of the 53 SPIRIT 2025 checklist rows');
    expect(spirit).toContain('| 9a | Introduction | Scientific background and rationale, including summary of relevant studies (published and unpublished) examining benefits and harms for each intervention |');
    expect(spirit).toContain('| 15a |');
    expect(spirit).toContain('| 19 |');
    for (const answered of ['14a', '16', '18']) expect(spirit).not.toContain(`| ${answered} |`);
    // The question states no objectives on benefits and harms; the design names no allocation ratio.
    for (const open of ['10', '12']) expect(spirit).toContain(`| ${open} |`);
  });

  it('tells a committee the randomisation items a ratio and a nameless method leave open', () => {
    const randomised = { ...partial, context: { ...partialContext, studyDesign: { ...partialContext.studyDesign, allocation: 'Allocation: 1:1', randomization: 'Computer-generated permuted blocks' } } };
    const spirit = section(protocolMarkdown(randomised), 'SPIRIT 2025 items still open');
    expect(spirit).toContain('| 22 | Methods: Assignment of interventions | Mechanism used to implement the random allocation sequence');
    expect(spirit).toContain('| 21a | Methods: Assignment of interventions | Who will generate the random allocation sequence and the method used |');
    expect(spirit).not.toContain('| 21b |');
    expect(spirit).not.toContain('| 12 |');

    // Once the protocol says who generates the sequence and how it is concealed, both items are answered.
    const answered = { ...randomised, context: { ...randomised.context, studyDesign: { ...randomised.context.studyDesign, sequenceGeneration: 'The trial statistician, computer-generated', allocationConcealment: 'Central web system' } } };
    const markdown = protocolMarkdown(answered);
    expect(section(markdown, '3. Study design')).toContain('**Allocation concealment:** Central web system');
    for (const id of ['21a', '22']) expect(section(markdown, 'SPIRIT 2025 items still open')).not.toContain(`| ${id} |`);
  });

  it('shows an empty stage as missing everything, and names no missing field once a stage is complete', () => {
    const empty = protocolMarkdown({ ...partial, context: {} });
    expect(section(empty, '1. Scientific question')).toContain('> **Missing:** research question');
    expect(section(empty, '1. Scientific question')).toContain('Nothing recorded yet.');
    expect(section(empty, '2. PICO')).toContain('> **Missing:** population, intervention, comparison, outcome');

    const done = protocolMarkdown({
      ...partial,
      stages: stages(PROTOCOL_STAGES.map((stage) => stage.id)),
      context: { ...partialContext, pico: { ...partialContext.pico, comparison: 'Target < 140 mmHg', outcome: 'Recurrent stroke' }, sampleSize: { ...partialContext.sampleSize, method: 'Two proportions' } },
    });
    expect(done).not.toMatch(/Missing|Draft|\(draft\)/);
  });

  it('follows the order of the stages it is given and writes a stage it has no layout for as labelled lines', () => {
    const markdown = protocolMarkdown({
      ...partial,
      context: { ...partialContext, budget: { totalCost: '¥ 1,000,000', sites: ['Beijing', 'Shanghai'] } } as ProtocolContext,
      stages: [
        { stageId: 'endpoints', stageName: 'Endpoints', contextField: 'endpoints', completed: true },
        { stageId: 'budget', stageName: 'Budget', contextField: 'budget', completed: true },
      ],
    });

    expect(markdown.split('\n').filter((line) => line.startsWith('## '))).toEqual(['## 1. Endpoints', '## 2. Budget', '## SPIRIT 2025 items still open']);
    expect(section(markdown, '2. Budget')).toContain('**Total cost:** ¥ 1,000,000\n\n**Sites:** Beijing; Shanghai');
  });

  it('shows stored values that do not have their documented shape as text instead of dropping them', () => {
    const markdown = protocolMarkdown({
      ...partial,
      context: {
        scientificQuestion: '只有一句话的研究问题',
        pico: { population: 'Adults', eligibility: { inclusion: ['Age ≥ 18', { text: 'Consent', operator: 'approx', field: 'consent', value: true }], exclusion: 'Pregnancy' } },
        studyDesign: { type: 'RCT', visits: ['Screening', { name: 'Day 7', day: 7 }] },
        sampleSize: { method: 'Two means', total: 128, perGroup: 64, assumptions: 'SD 10, difference 5' },
        endpoints: { primary: 'HbA1c at 6 months', secondary: ['Weight'] },
      } as unknown as ProtocolContext,
    });

    expect(section(markdown, '1. Scientific question')).toContain('**Value:** 只有一句话的研究问题');
    expect(section(markdown, '2. PICO')).toContain('1. Age ≥ 18\n2. Consent (check: consent approx true)');
    expect(section(markdown, '2. PICO')).toContain('### Exclusion criteria\n\n1. Pregnancy');
    expect(section(markdown, '3. Study design')).toContain('| Screening |  | — |\n| Day 7 | 7 | — |');
    expect(section(markdown, '4. Sample size')).toContain('**Per group:** intervention: 64');
    expect(section(markdown, '4. Sample size')).toContain('- SD 10, difference 5');
    expect(section(markdown, '5. Endpoints')).toContain('**Primary endpoint:** HbA1c at 6 months');
    expect(section(markdown, '5. Endpoints')).toContain('1. Weight');
  });

  it('keeps user text as text: headings, lists, quotes, emphasis and table pipes cannot change the structure', () => {
    const markdown = protocolMarkdown({
      ...partial,
      title: '# Not a second title',
      context: {
        ...partialContext,
        scientificQuestion: { question: 'Does *this* work? <script>x</script>', background: 'First line\n# Not a heading\n- not a list\n1. not numbered\n> not a quote\n    not code\n===' },
        pico: { ...partialContext.pico, eligibility: { inclusion: [{ text: '- Age | 18+\n2. more' }] } },
        studyDesign: { ...partialContext.studyDesign, visits: [{ name: 'Week 4 | phone', day: 28 }] },
      },
    });

    const lines = markdown.split('\n');
    expect(lines.filter((line) => /^#{1,6} /.test(line))).toHaveLength(11); // the title, 6 sections, 4 sub-headings (inclusion, visits, assumptions, secondary)
    expect(lines[0]).toBe('# \\# Not a second title');
    expect(markdown).toContain('**Research question:** Does \\*this\\* work? \\<script\\>x\\</script\\>');
    expect(markdown).toContain('**Background:** First line\\\n\\# Not a heading\\\n\\- not a list\\\n1\\. not numbered\\\n\\> not a quote\\\nnot code\\\n\\===');
    expect(markdown).toContain('### Inclusion criteria\n\n1. \\- Age \\| 18+\\\n   2\\. more\n');
    const row = lines.find((line) => line.startsWith('| Week 4'))!;
    expect(row).toBe('| Week 4 \\| phone | 28 | — |');
    expect(row.split(/(?<!\\)\|/)).toHaveLength(5); // three cells between four unescaped pipes
  });
});

describe('protocolDocx', () => {
  it('is a real .docx whose document holds the headings, the user values and the missing marker', async () => {
    const buffer = await protocolDocx(partial);

    expect(buffer.subarray(0, 2).toString('latin1')).toBe('PK');
    const xml = await documentXml(buffer);
    const paragraphs = paragraphsOf(xml);
    for (const heading of ['INTENSE-BP 卒中二级预防', '1. Scientific question', '2. PICO (draft)', '3. Study design (draft)', 'Visit schedule', 'SPIRIT 2025 items still open']) {
      expect(paragraphs).toContain(heading);
    }
    expect(paragraphs).toContain('Research question: 强化降压能否降低缺血性卒中后的复发风险?');
    expect(paragraphs).toContain('Population: 发病 7 天内的缺血性卒中患者');
    expect(paragraphs).toContain('Missing: comparison, outcome');
    expect(paragraphs).toContain('Draft: this stage is not completed yet; its content may still change.');
    expect(paragraphs).toContain('Intervention: Systolic target < 120 mmHg');
    expect(xml).toMatch(/<w:highlight w:val="yellow"\/>[^]*?<w:t xml:space="preserve">Missing: <\/w:t>/);
  });

  it('writes the criteria as numbered lists that each start at 1, and the visit schedule and open SPIRIT items as tables', async () => {
    const xml = await documentXml(await protocolDocx(partial));

    const numbered = [...xml.matchAll(/<w:p>(?:(?!<\/w:p>).)*?<w:numId w:val="(\d+)"\/>(?:(?!<\/w:p>).)*?<w:t[^>]*>([^<]*)<\/w:t>/g)].map((match) => [match[1], match[2]]);
    const byText = new Map(numbered.map(([numId, text]) => [text, numId]));
    expect(byText.get('Age 18 to 80 years (check: age between 18 and 80 years)')).toBe(byText.get('签署知情同意书'));
    expect(byText.get('Intracranial haemorrhage')).toBeDefined();
    expect(byText.get('Intracranial haemorrhage')).not.toBe(byText.get('签署知情同意书'));
    const tables = xml.split('<w:tbl>').slice(1).map(paragraphsOf);
    expect(tables).toHaveLength(2);
    expect(tables[0]).toEqual(expect.arrayContaining(['Visit', 'Window (days)', 'Month 3', '90', '-7 / +14', 'month_3_arm_1']));
    expect(tables[1]).toEqual(expect.arrayContaining(['9a', '15a', 'Explanation for choice of comparator']));
    expect(tables[1]).not.toContain('14a');
  });

  it('stays a well-formed document when user text holds characters XML cannot carry', async () => {
    const draft = { ...partial, context: { ...partialContext, scientificQuestion: { question: 'Bell\u0007 and NUL\u0000 & <tags>\nsecond line' } } };
    const xml = await documentXml(await protocolDocx(draft));

    const parser = new SaxesParser();
    expect(() => parser.write(xml).close()).not.toThrow();
    expect(paragraphsOf(xml)).toContain('Research question: Bell\uFFFD and NUL\uFFFD & <tags>second line');
    expect(xml).toContain('<w:br/><w:t xml:space="preserve">second line</w:t>');
  });
});
