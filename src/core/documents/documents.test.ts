import JSZip from 'jszip';
import { SaxesParser } from 'saxes';
import { describe, expect, it } from 'vitest';
import { renderDocx, renderMarkdown, type DocumentBlock } from './index.js';

const sample: DocumentBlock[] = [
  { kind: 'heading', level: 1, text: '皮肤科问诊记录' },
  { kind: 'paragraph', text: 'First line\n- not a list' },
  { kind: 'field', label: 'Symptoms', value: '红疹; 瘙痒' },
  { kind: 'note', tone: 'warning', label: 'Red flag', text: 'Fever with a widespread rash\n> not a nested quote' },
  { kind: 'note', tone: 'caution', label: 'Draft', text: 'may change' },
  { kind: 'list', ordered: true, items: ['one', 'two'] },
  { kind: 'list', ordered: true, items: ['again one'] },
  { kind: 'list', ordered: false, items: ['bullet'] },
  { kind: 'table', columns: ['Name', 'Dose'], rows: [['Hydrocortisone 1% | cream', 'twice daily']] },
];

async function zipText(buffer: Buffer, file: string): Promise<string> {
  const zip = await JSZip.loadAsync(buffer);
  return zip.file(file)!.async('string');
}

describe('renderMarkdown', () => {
  it('writes each kind of block, escaping text so it cannot change the structure', () => {
    const markdown = renderMarkdown(sample);

    expect(markdown.startsWith('# 皮肤科问诊记录\n\nFirst line\\\n\\- not a list\n\n**Symptoms:** 红疹; 瘙痒\n\n')).toBe(true);
    expect(markdown).toContain('> **Red flag:** Fever with a widespread rash\\\n> \\> not a nested quote\n\n> **Draft:** may change');
    expect(markdown).toContain('1. one\n2. two\n\n1. again one\n\n- bullet');
    expect(markdown).toContain('| Name | Dose |\n| --- | --- |\n| Hydrocortisone 1% \\| cream | twice daily |');
    expect(markdown.endsWith('|\n')).toBe(true);
  });
});

describe('renderDocx', () => {
  it('is a well-formed .docx with the headings, the Chinese text, tables and highlighted warnings', async () => {
    const buffer = await renderDocx(sample, { title: '皮肤科问诊记录' });

    expect(buffer.subarray(0, 2).toString('latin1')).toBe('PK');
    const xml = await zipText(buffer, 'word/document.xml');
    expect(() => new SaxesParser().write(xml).close()).not.toThrow();
    expect(xml).toMatch(/<w:pStyle w:val="Title"\/>(?:(?!<\/w:p>).)*皮肤科问诊记录/);
    expect(xml).toContain('红疹; 瘙痒');
    expect(xml).toMatch(/<w:highlight w:val="yellow"\/>(?:(?!<\/w:p>).)*Red flag: /);
    expect(xml).not.toMatch(/<w:highlight w:val="yellow"\/>(?:(?!<\/w:p>).)*Draft: /);
    expect(xml.split('<w:tbl>')).toHaveLength(2);
    expect(xml).toContain('Hydrocortisone 1% | cream');
    // Chinese text needs an East Asian font, which Word takes from the default run style.
    expect(await zipText(buffer, 'word/styles.xml')).toMatch(/w:eastAsia="SimSun"/);
    expect(await zipText(buffer, 'docProps/core.xml')).toContain('<dc:title>皮肤科问诊记录</dc:title>');
  });

  it('restarts the numbering for every ordered list', async () => {
    const xml = await zipText(await renderDocx(sample, { title: 'Lists' }), 'word/document.xml');

    const numIdOf = (text: string) => xml.match(new RegExp(`<w:numId w:val="(\\d+)"/>(?:(?!</w:p>).)*?${text}`))?.[1];
    expect(numIdOf('one')).toBeDefined();
    expect(numIdOf('two')).toBe(numIdOf('one'));
    expect(numIdOf('again one')).not.toBe(numIdOf('one'));
  });

  it('replaces characters XML cannot carry, in the text and the title', async () => {
    const buffer = await renderDocx([{ kind: 'field', label: 'Note\u0001', value: 'Bell\u0007 & <tag>\nsecond line' }], { title: 'Title\u0000' });
    const xml = await zipText(buffer, 'word/document.xml');

    expect(() => new SaxesParser().write(xml).close()).not.toThrow();
    expect(xml).toContain('Note\uFFFD: ');
    expect(xml).toContain('Bell\uFFFD &amp; &lt;tag&gt;</w:t></w:r><w:r><w:br/><w:t xml:space="preserve">second line');
    expect(await zipText(buffer, 'docProps/core.xml')).toContain('Title\uFFFD');
  });
});
