import { describe, expect, it } from 'vitest';
import { en } from './en';
import { localeFromLanguage, translate } from './translate';
import { zh } from './zh';

describe('translate', () => {
  it('fills placeholders and leaves unknown ones visible', () => {
    expect(translate('en', 'scenarios.documents', { count: 3 })).toBe('3 documents');
    expect(translate('en', 'scenarios.documents')).toBe('{count} documents');
  });

  it('keeps the same placeholders in both languages so no value is dropped in Chinese', () => {
    const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
    for (const key of Object.keys(en) as Array<keyof typeof en>) {
      expect(placeholders(zh[key]), key).toEqual(placeholders(en[key]));
    }
  });

  it('picks Chinese for every zh browser language', () => {
    expect(localeFromLanguage('zh-CN')).toBe('zh');
    expect(localeFromLanguage('zh-Hant-TW')).toBe('zh');
    expect(localeFromLanguage('en-GB')).toBe('en');
    expect(localeFromLanguage(undefined)).toBe('en');
  });
});
