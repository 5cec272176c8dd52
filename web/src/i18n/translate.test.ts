import { describe, expect, it } from 'vitest';
import { en } from './en';
import { localeFromLanguage, translate } from './translate';
import { zh } from './zh';

/** The console's code (its screens, stores and components), where each key is used. */
const SOURCES = import.meta.glob<string>(['../**/*.{ts,tsx}', '!../**/*.test.ts', '!./en.ts', '!./zh.ts'], { query: '?raw', import: 'default', eager: true });

describe('translate', () => {
  it('fills placeholders and leaves unknown ones visible', () => {
    expect(translate('en', 'scenarios.documents', { count: 3 })).toBe('3 documents');
    expect(translate('en', 'trial.projectSummary', { subjects: 2 })).toBe('2 subjects · {rows, plural, one {# record row} other {# record rows}} · {sites, plural, one {# site} other {# sites}}');
  });

  it('keeps the same placeholders in both languages so no value is dropped in Chinese', () => {
    // A plural choice counts as its variable once: English chooses a form by it, Chinese writes it plainly.
    const placeholders = (text: string) => [...new Set([...text.matchAll(/\{(\w+)(?:\}|, plural,)/g)].map((m) => m[1]))].sort();
    for (const key of Object.keys(en) as Array<keyof typeof en>) {
      expect(placeholders(zh[key]), key).toEqual(placeholders(en[key]));
    }
  });

  it('says "1 problem" and "2 problems": a count chooses its plural form by the language\'s rules', () => {
    expect(translate('en', 'skillEditor.problems', { count: 1 })).toBe('1 problem');
    expect(translate('en', 'skillEditor.problems', { count: 2 })).toBe('2 problems');
    expect(translate('en', 'skillEditor.problems', { count: 0 })).toBe('0 problems');
    expect(translate('en', 'skillImpact.rules.changed', { count: 1 })).toBe('1 rule changed:');
    expect(translate('en', 'queries.bulk.closed', { closed: 1 })).toBe('1 query closed.');
    expect(translate('zh', 'skillEditor.problems', { count: 1 })).toBe(zh['skillEditor.problems'].replace('{count}', '1'));
  });

  it('writes no count string of English as "1 things": every count goes through a plural choice', () => {
    const NUMBER_VARS = /\{(count|closed|fired|records|affected|evaluated|subjects|rows|sites|failed|total|events|selected|covered)\} (?!of\b)(?:[a-z]+ ){0,2}[a-z]+s\b/;
    for (const [key, text] of Object.entries(en)) expect(NUMBER_VARS.test(text), `${key}: ${text}`).toBe(false);
  });

  it('uses every key: one no screen shows is a text nobody reviews, in either language', () => {
    // Keys built at run time: `severity.${x}` in a template, or enumLabel(t, 'query.status', x).
    const prefixes = new Set<string>();
    for (const text of Object.values(SOURCES)) {
      for (const match of text.matchAll(/`([\w.]+\.)\$\{/g)) prefixes.add(match[1]!);
      for (const match of text.matchAll(/enumLabel\(\s*t,\s*'([\w.]+)'/g)) prefixes.add(`${match[1]}.`);
    }
    const all = Object.values(SOURCES).join('\n');
    const unused = Object.keys(en).filter((key) => !all.includes(`'${key}'`) && !all.includes(`"${key}"`) && ![...prefixes].some((prefix) => key.startsWith(prefix)));
    expect(unused).toEqual([]);
  });

  it('keeps a plural without its count visible', () => {
    expect(translate('en', 'skillEditor.problems')).toContain('{count, plural,');
  });

  it('picks Chinese for every zh browser language', () => {
    expect(localeFromLanguage('zh-CN')).toBe('zh');
    expect(localeFromLanguage('zh-Hant-TW')).toBe('zh');
    expect(localeFromLanguage('en-GB')).toBe('en');
    expect(localeFromLanguage(undefined)).toBe('en');
  });
});
