import { describe, expect, it } from 'vitest';
import { createLocalEmbedder } from './local-embedder.js';

const cosine = (a: number[], b: number[]) => a.reduce((sum, x, i) => sum + x * b[i]!, 0);

async function similarities(query: string, related: string, unrelated: string) {
  const [q, r, u] = await createLocalEmbedder().embed([query, related, unrelated]);
  return { related: cosine(q!, r!), unrelated: cosine(q!, u!) };
}

describe('createLocalEmbedder', () => {
  it('is named after its scheme, with the dimension in the name when it is not the default', () => {
    expect(createLocalEmbedder()).toMatchObject({ model: 'local-hash-ngram-v1', dimension: 256 });
    expect(createLocalEmbedder({ dimension: 512 })).toMatchObject({ model: 'local-hash-ngram-v1-512', dimension: 512 });
  });

  it('gives the same unit-length vector for the same text in every instance', async () => {
    const text = '受试者 ALT 升高至 3×ULN，暂停给药。';
    const [a] = await createLocalEmbedder().embed([text]);
    const [b] = await createLocalEmbedder().embed([text]);
    expect(a).toEqual(b);
    expect(a).toHaveLength(256);
    expect(Math.sqrt(cosine(a!, a!))).toBeCloseTo(1, 10);
  });

  it('scores related Chinese texts above unrelated ones', async () => {
    const scores = await similarities(
      '肝功能异常时是否需要暂停给药？',
      '若谷丙转氨酶超过正常值上限三倍，提示肝功能异常，研究者应暂停给药并上报。',
      '随机化后第一次访视窗口为第七天加减两天，超出窗口的访视记为方案偏离。',
    );
    expect(scores.related).toBeGreaterThan(scores.unrelated + 0.15);
  });

  it('scores related English texts above unrelated ones, across inflections', async () => {
    const scores = await similarities(
      'When should dosing be paused for elevated liver enzymes?',
      'If ALT or AST is elevated above three times the upper limit, the investigator pauses dosing and reports the liver event.',
      'The first visit after randomisation takes place on day seven, plus or minus two days.',
    );
    expect(scores.related).toBeGreaterThan(scores.unrelated + 0.15);
  });

  it('matches mixed Chinese and English clinical text on shared terms', async () => {
    const scores = await similarities(
      'HbA1c 主要终点',
      '主要终点为第12周 HbA1c 相对基线的变化。',
      '研究护士应核对受试者日记卡并记录合并用药。',
    );
    expect(scores.related).toBeGreaterThan(scores.unrelated);
  });

  it('still embeds text made only of symbols, and rejects an unusable dimension', async () => {
    const [v] = await createLocalEmbedder().embed(['±±→→']);
    expect(cosine(v!, v!)).toBeCloseTo(1, 10);
    expect(() => createLocalEmbedder({ dimension: 3 })).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED' }));
    expect(() => createLocalEmbedder({ dimension: 4096 })).toThrow(/16 to 2000/);
  });
});
