import { describe, expect, it } from 'vitest';
import { translate } from '../../../i18n/translate';
import type { HotMemoryLine } from '../../../api';
import { lineSourceLabel, lineSourceMessage, linesBySection, usedPercent } from './line-source';

const en = (key: Parameters<typeof translate>[1], vars?: Record<string, string | number>) => translate('en', key, vars);
const zh = (key: Parameters<typeof translate>[1], vars?: Record<string, string | number>) => translate('zh', key, vars);

describe('line sources', () => {
  it('names the conversation turn, record, report, feedback or person a memory line came from', () => {
    expect(lineSourceLabel(en, { kind: 'turn', ref: '3f0c1a9e-5b7d-4c2e-9a41-0d6b8e2f7c13#4' })).toBe('Conversation 3f0c1a9e, message 4');
    expect(lineSourceLabel(en, { kind: 'record', ref: 'S-017' })).toBe('Record S-017');
    expect(lineSourceLabel(en, { kind: 'report', ref: 'aaaaaaaa-5b7d-4c2e-9a41-0d6b8e2f7c13' })).toBe('Weekly report aaaaaaaa');
    expect(lineSourceLabel(en, { kind: 'feedback', ref: 'bbbbbbbb-5b7d-4c2e-9a41-0d6b8e2f7c13' })).toBe('Feedback bbbbbbbb');
    expect(lineSourceLabel(en, { kind: 'user', ref: 'nurse-wang' })).toBe('Written by nurse-wang');
    expect(lineSourceLabel(zh, { kind: 'record', ref: 'S-017' })).toBe('记录 S-017');
  });

  it('keeps a turn reference without a message number readable', () => {
    expect(lineSourceMessage({ kind: 'turn', ref: 'c1' })).toEqual({ key: 'memory.source.conversation', vars: { conversation: 'c1' } });
  });
});

describe('linesBySection', () => {
  it('lists preferences, current state and prohibitions in that order, empty ones included', () => {
    const line = (section: HotMemoryLine['section'], text: string): HotMemoryLine => ({ section, text, source: { kind: 'user', ref: 'u' }, addedBy: 'u', addedAt: '2026-11-24T00:00:00Z' });
    const grouped = linesBySection([line('prohibitions', 'No names'), line('preferences', 'Brief'), line('preferences', 'Tables')]);
    expect(grouped.map((g) => [g.section, g.lines.map((l) => l.text)])).toEqual([
      ['preferences', ['Brief', 'Tables']],
      ['state', []],
      ['prohibitions', ['No names']],
    ]);
  });
});

describe('usedPercent', () => {
  it('rounds the share of the cap and stops at full', () => {
    expect(usedPercent(500, 2000)).toBe(25);
    expect(usedPercent(2500, 2000)).toBe(100);
    expect(usedPercent(0, 0)).toBe(0);
  });
});
