import { describe, expect, it } from 'vitest';
import { detectLanguage, MAX_INTENTS, routeByRules } from './route-intent.js';

const skills = [
  { id: 'demo-core-checks', name: '核心数据核查 / Core data checks', description: 'Eligibility, consent, visit windows' },
  { id: 'ae-review', name: 'AE review' },
];

describe('the rule-based intent router', () => {
  it('splits the seed V2.9 example into a question, then the write request, in the user order', () => {
    const routed = routeByRules('帮我查一下 P003 的 ECOG，然后录入今天的访视数据', { skills });
    expect(routed).toEqual({
      by: 'rules',
      language: 'zh',
      intents: [
        { type: 'data_question', text: '帮我查一下 P003 的 ECOG' },
        { type: 'write_request', text: '录入今天的访视数据' },
      ],
    });
  });

  it('splits on 再 after a pause but not inside a word, and keeps "and" between record ids', () => {
    expect(routeByRules('先查 P003 的 ECOG，再录入今天的访视数据', { skills }).intents.map((i) => i.type)).toEqual(['data_question', 'write_request']);
    expect(routeByRules('请再次查一下 P004 的情况', { skills }).intents).toEqual([{ type: 'data_question', text: '请再次查一下 P004 的情况' }]);
    expect(routeByRules('run QC on P003 and P004', { skills }).intents).toEqual([{ type: 'qc_task', text: 'run QC on P003 and P004', recordIds: ['P003', 'P004'] }]);
  });

  it('reads record ids as written, in order, each once', () => {
    const routed = routeByRules('用核心数据核查对 S003、s-012、受试者 7 和 record 12 做一次质控，S003 优先', { skills });
    expect(routed.intents).toEqual([
      { type: 'qc_task', text: '用核心数据核查对 S003、s-012、受试者 7 和 record 12 做一次质控，S003 优先', recordIds: ['S003', 'S-012', '7', '12'], skillId: 'demo-core-checks' },
    ]);
    // Versions, quarters and visit numbers are not record ids.
    expect(routeByRules('run QC for Q3 with protocol V2.9', { skills }).intents[0]).toEqual({ type: 'qc_task', text: 'run QC for Q3 with protocol V2.9' });
  });

  it('names the skill by id, by either side of its bilingual name, or not at all', () => {
    expect(routeByRules('run ae-review on P001', { skills }).intents[0]!.skillId).toBe('ae-review');
    expect(routeByRules('run the core data checks on all records', { skills }).intents[0]!.skillId).toBe('demo-core-checks');
    expect(routeByRules('run QC on all records', { skills }).intents[0]).toEqual({ type: 'qc_task', text: 'run QC on all records' });
  });

  it('writes a memory fact without its trigger words, in the section it belongs to', () => {
    const fact = (message: string) => routeByRules(message, { skills }).intents[0]!.fact;
    expect(fact('以后汇报只要结论')).toEqual({ section: 'preferences', text: '汇报只要结论' });
    expect(fact('记住：S005 已退出研究。')).toEqual({ section: 'state', text: 'S005 已退出研究' });
    expect(fact('请记得不要在汇总里写中心名称')).toEqual({ section: 'prohibitions', text: '不要在汇总里写中心名称' });
    expect(fact('remember: never include site names in summaries')).toEqual({ section: 'prohibitions', text: 'never include site names in summaries' });
    expect(fact('From now on, keep answers to three bullet points.')).toEqual({ section: 'preferences', text: 'keep answers to three bullet points' });
    expect(fact(`remember: ${'long '.repeat(100)}`)!.text.length).toBeLessThanOrEqual(200);
  });

  it('puts a memory instruction first, since it shapes how the rest is answered', () => {
    const routed = routeByRules('P001 入组了吗？以后汇报只要结论', { skills });
    expect(routed.intents.map((i) => [i.type, i.text])).toEqual([
      ['memory_instruction', '以后汇报只要结论'],
      ['data_question', 'P001 入组了吗？'],
    ]);
  });

  it('drops greetings next to a task, keeps questions of one kind together, and a question about the assistant as its own', () => {
    expect(routeByRules('谢谢！另外 S005 的访视窗口是多少天？', { skills }).intents).toEqual([{ type: 'data_question', text: '谢谢！另外 S005 的访视窗口是多少天？' }]);
    expect(routeByRules('P001 入组了吗？P002 呢？', { skills }).intents).toEqual([{ type: 'data_question', text: 'P001 入组了吗？P002 呢？' }]);
    expect(routeByRules('你能做什么？另外查一下 P003 的 ECOG', { skills }).intents.map((i) => i.type)).toEqual(['chit_chat', 'data_question']);
  });

  it(`lists at most ${MAX_INTENTS} intents, the last taking the rest of the message`, () => {
    const routed = routeByRules('查 P001；记住：不要写中心名称；把 P003 删除；对 P004 做质控；你是谁；run QC on S009；close query 7', { skills });
    expect(routed.intents).toHaveLength(MAX_INTENTS);
    expect(routed.intents.map((i) => i.type)).toEqual(['memory_instruction', 'data_question', 'write_request', 'qc_task', 'chit_chat']);
    expect(routed.intents.at(-1)!.text).toBe('你是谁；run QC on S009；close query 7');
  });

  it('never throws: empty, odd and huge input come back as one intent', () => {
    for (const message of ['', '   ', '\u0000\u0000', '；；；', '?!', '(((((((((((', 'a'.repeat(200_000), '然后'.repeat(50_000)]) {
      const routed = routeByRules(message, { skills });
      expect(routed.by).toBe('rules');
      expect(routed.intents.length).toBeGreaterThanOrEqual(1);
    }
    expect(routeByRules('   ', { skills }).intents).toEqual([{ type: 'unclear', text: '' }]);
    expect(routeByRules(undefined as unknown as string, { skills: undefined as never }).intents).toEqual([{ type: 'unclear', text: '' }]);
    // Only the opening of a pasted document is matched: QC asked for at its end is not seen.
    expect(routeByRules(`${'x'.repeat(10_000)} 质控`, { skills }).intents[0]!.type).toBe('unclear');
  });

  it('tells Chinese from English by Han characters against English words', () => {
    expect(detectLanguage('对 P003 做一次质控')).toBe('zh');
    expect(detectLanguage('QC 一下 S003')).toBe('zh');
    expect(detectLanguage("run QC on 张三's record")).toBe('en');
    expect(detectLanguage('how many open queries at site 2?')).toBe('en');
    expect(detectLanguage('???')).toBe('zh');
  });
});
