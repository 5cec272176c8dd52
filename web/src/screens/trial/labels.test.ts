import { describe, expect, it } from 'vitest';
import { translate, type Translate } from '../../i18n/translate';
import { siteLabel } from './labels';

const inLocale = (locale: 'en' | 'zh'): Translate => (key, vars) => translate(locale, key, vars);

describe('site labels', () => {
  // Issue 32: "(no site)" came from the server in English and showed so in a Chinese console; the report now
  // counts records without a data access group under '' (query-list-findings.test.ts) and the console names it.
  it('names records without a site in the console\'s language, and a site by its own name', () => {
    expect(siteLabel(inLocale('zh'), '')).toBe('（无中心）');
    expect(siteLabel(inLocale('en'), '')).toBe('(no site)');
    expect(siteLabel(inLocale('zh'), 'SITE-01')).toBe('SITE-01');
  });
});
