import { describe, expect, it } from 'vitest';
import { translate, type Translate } from '../../../i18n/translate';
import { intentBadgeLabel } from './intent-label';

const en: Translate = (key, vars) => translate('en', key, vars);
const zh: Translate = (key, vars) => translate('zh', key, vars);

describe('intentBadgeLabel', () => {
  it('names the intent, and how it was handled unless it was simply answered', () => {
    expect(intentBadgeLabel(en, { type: 'data_question', ok: true })).toBe('Data question');
    expect(intentBadgeLabel(en, { type: 'history_question', ending: 'answer', ok: true })).toBe('History question');
    expect(intentBadgeLabel(en, { type: 'write_request', ending: 'guided', ok: true })).toBe('Write request → guided');
    expect(intentBadgeLabel(zh, { type: 'write_request', ending: 'guided', ok: true })).toBe('修改请求 → 已指引');
  });
});
