import { describe, expect, it } from 'vitest';
import { chunkText, type TextChunk } from './chunk-text.js';

const zhSentences = [
  '受试者在筛选期需完成血常规、肝肾功能及心电图检查。',
  '若谷丙转氨酶超过正常值上限三倍，研究者应暂停给药并在二十四小时内上报严重不良事件！',
  '随机化后第一次访视窗口为第七天加减两天；超出窗口的访视记为方案偏离。',
  '研究护士应核对受试者日记卡，并记录合并用药的名称、剂量和起止日期。',
  '主要终点是第十二周时糖化血红蛋白相对基线的变化量？',
];
const enSentences = [
  'Subjects must complete a full blood count, liver and renal panels and an ECG during screening.',
  'If ALT exceeds three times the upper limit of normal, the investigator pauses dosing and reports an SAE within 24 hours!',
  'The first post-randomisation visit window is day 7 plus or minus 2 days; a visit outside it is a protocol deviation.',
  'Study nurses check the subject diary and record concomitant medication names, doses and dates.',
  'Is the primary endpoint the change in HbA1c from baseline at week 12?',
];

function paragraphs(sentences: string[], count: number, perParagraph: number, joiner: string): string {
  const out: string[] = [];
  for (let p = 0; p < count; p++) {
    const para: string[] = [];
    for (let s = 0; s < perParagraph; s++) para.push(sentences[(p * 3 + s) % sentences.length]!);
    out.push(para.join(joiner));
  }
  return out.join('\n\n');
}

function expectWellFormed(text: string, chunks: TextChunk[]): void {
  chunks.forEach((chunk, i) => {
    expect(chunk.index).toBe(i);
    expect(chunk.content).toBe(text.slice(chunk.start, chunk.end));
    expect(chunk.content.trim()).toBe(chunk.content);
    if (i < chunks.length - 1) {
      expect(chunk.content.length).toBeGreaterThanOrEqual(800);
      expect(chunk.content.length).toBeLessThanOrEqual(1000);
      const overlap = chunk.end - chunks[i + 1]!.start;
      expect(overlap).toBeGreaterThanOrEqual(100);
      expect(overlap).toBeLessThanOrEqual(150);
    }
  });
  // Nothing visible is lost between chunks.
  expect(chunks[0]!.start).toBe(text.length - text.trimStart().length);
  expect(chunks.at(-1)!.end).toBe(text.trimEnd().length);
}

describe('chunkText', () => {
  it('returns one chunk for a short document, trimmed of surrounding whitespace', () => {
    const text = '\n  方案第3版：入组标准见第5节。\n';
    expect(chunkText(text)).toEqual([{ index: 0, content: '方案第3版：入组标准见第5节。', start: 3, end: 18 }]);
  });

  it('refuses empty or whitespace-only text with VALIDATION_FAILED', () => {
    for (const text of ['', '  \n\t ']) {
      expect(() => chunkText(text)).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED', message: expect.stringMatching(/^text is empty/) }));
    }
  });

  it('cuts Chinese text without spaces at sentence ends, 800-1000 characters with 100-150 overlap', () => {
    const text = zhSentences.join('').repeat(40); // one paragraph, no spaces, ~7000 characters
    const chunks = chunkText(text);
    expect(chunks.length).toBeGreaterThan(6);
    expectWellFormed(text, chunks);
    for (const chunk of chunks.slice(0, -1)) expect(chunk.content).toMatch(/[。！？；]$/);
    // Each later chunk starts at a sentence start too, because one sits within every 150-character window.
    for (const chunk of chunks.slice(1)) expect(text[chunk.start - 1]).toMatch(/[。！？；]/);
  });

  it('cuts English text at sentence ends and starts chunks on a word', () => {
    const text = enSentences.join(' ').repeat(20);
    const chunks = chunkText(text);
    expectWellFormed(text, chunks);
    for (const chunk of chunks.slice(0, -1)) expect(chunk.content).toMatch(/[.!?;]$/);
    for (const chunk of chunks.slice(1)) expect(text[chunk.start - 1]).toMatch(/\s/);
  });

  it('prefers a paragraph break over a later sentence end', () => {
    const text = paragraphs(zhSentences, 20, 9, ''); // paragraphs of ~330 characters
    const chunks = chunkText(text);
    expectWellFormed(text, chunks);
    for (const chunk of chunks.slice(0, -1)) expect(text.slice(chunk.end, chunk.end + 2)).toBe('\n\n');
  });

  it('treats a single line break as a sentence end', () => {
    const line = '访视编号 受试者编号 收缩压 舒张压 心率 体温 备注'.replace(/ /g, '，'); // clause marks only
    const text = Array.from({ length: 120 }, (_, i) => `${i}，${line}`).join('\n');
    const chunks = chunkText(text);
    expectWellFormed(text, chunks);
    for (const chunk of chunks.slice(0, -1)) expect(text[chunk.end]).toBe('\n');
  });

  it('keeps decimals whole and falls back to a word boundary when there is no sentence end', () => {
    const text = 'dose 3.5 mg twice daily with food '.repeat(100);
    const chunks = chunkText(text);
    expectWellFormed(text, chunks);
    for (const chunk of chunks.slice(0, -1)) {
      expect(chunk.content).not.toMatch(/\d\.$/);
      expect(text[chunk.end]).toBe(' ');
    }
  });

  it('cuts hard when there is no boundary at all, never splitting a surrogate pair', () => {
    const plain = 'x'.repeat(3000);
    const plainChunks = chunkText(plain);
    expectWellFormed(plain, plainChunks);
    expect(plainChunks[0]!.content).toHaveLength(1000);

    const emoji = '😀'.repeat(1500);
    for (const chunk of chunkText(emoji)) {
      expect(chunk.start % 2).toBe(0);
      expect(chunk.end % 2).toBe(0);
    }
  });

  it('honours custom sizes and rejects options that could not make progress', () => {
    const text = enSentences.join(' ').repeat(5);
    const chunks = chunkText(text, { minSize: 200, maxSize: 300, overlap: 40 });
    for (const chunk of chunks.slice(0, -1)) expect(chunk.content.length).toBeLessThanOrEqual(300);
    expect(() => chunkText(text, { minSize: 100, maxSize: 200, overlap: 80 })).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED' }));
    expect(() => chunkText(text, { minSize: 500, maxSize: 400 })).toThrow(/maxSize/);
  });
});
