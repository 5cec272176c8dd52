import { describe, expect, it } from 'vitest';
import type { HotMemoryLine } from '../types.js';
import { lineKey, makeLine } from './lines.js';
import { parseHotMemoryMarkdown, renderHotMemory } from './markdown.js';

const source = { kind: 'user' as const, ref: 'pi' };
const line = (section: HotMemoryLine['section'], text: string) => makeLine(section, text, source, 'pi', '2026-01-01T00:00:00.000Z');

describe('hot memory markdown', () => {
  it('renders only the sections that have lines, in a fixed order, one bullet each', () => {
    const content = renderHotMemory([line('prohibitions', 'Never show subject names'), line('preferences', 'PI wants results only'), line('preferences', '回答要简洁')]);
    expect(content).toBe('## Preferences\n- PI wants results only\n- 回答要简洁\n\n## Prohibitions\n- Never show subject names');
    expect(renderHotMemory([])).toBe('');
  });

  it('reads what it renders back to the same lines', () => {
    const lines = [line('preferences', 'brief answers'), line('state', 'enrolment phase'), line('prohibitions', 'no age checks skipped')];
    expect(parseHotMemoryMarkdown(renderHotMemory(lines))).toEqual(lines.map(({ section, text }) => ({ section, text })));
  });

  it('accepts Chinese headings, numbered and starred bullets and plain lines', () => {
    const parsed = parseHotMemoryMarkdown('# 用户偏好\n* 只要看结果\n\n## 项目状态：\n1. 入组阶段\n目标 120 例\n### 系统禁令\n- 不要跳过年龄核查\n## 禁止\n-   \n');
    expect(parsed).toEqual([
      { section: 'preferences', text: '只要看结果' },
      { section: 'state', text: '入组阶段' },
      { section: 'state', text: '目标 120 例' },
      { section: 'prohibitions', text: '不要跳过年龄核查' },
    ]);
    expect(parseHotMemoryMarkdown('## Current state\n1.5 mg/kg dose since visit 3\n-5% enrolment vs plan\n2、 第二中心暂停')).toEqual([
      { section: 'state', text: '1.5 mg/kg dose since visit 3' },
      { section: 'state', text: '-5% enrolment vs plan' },
      { section: 'state', text: '第二中心暂停' },
    ]);
  });

  it('refuses an unknown heading and text before any heading, naming every line and the accepted headings', () => {
    const error = (() => {
      try {
        parseHotMemoryMarkdown('stray line\n## Preferences\n- ok\n## Notes\n- lost\n- lost too');
      } catch (e) {
        return e as { code: string; status: number; message: string; details: { problems: string[] } };
      }
    })();
    expect(error).toMatchObject({ code: 'VALIDATION_FAILED', status: 400 });
    expect(error!.details.problems).toEqual(['line 1: text before any section heading', 'line 4: unknown heading "Notes"']);
    expect(error!.message).toContain('## Preferences');
    expect(error!.message).toContain('当前状态');
  });

  it('treats case, spacing and full-width characters as the same line, within one section only', () => {
    expect(lineKey({ section: 'preferences', text: '  ＰＩ   wants  RESULTS ' })).toBe(lineKey({ section: 'preferences', text: 'pi wants results' }));
    expect(lineKey({ section: 'preferences', text: 'x' })).not.toBe(lineKey({ section: 'state', text: 'x' }));
  });
});
