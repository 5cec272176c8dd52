import { en, type MessageKey, type Messages } from './en';
import { pluralCategory } from './format';
import { zh } from './zh';

export type Locale = 'en' | 'zh';
export type TranslateVars = Record<string, string | number>;
export type Translate = (key: MessageKey, vars?: TranslateVars) => string;

const dictionaries: Record<Locale, Messages> = { en, zh };

/** The index of the `}` that closes the `{` at `open`, or -1. */
function closingBrace(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === '{') depth += 1;
    else if (text[i] === '}' && --depth === 0) return i;
  }
  return -1;
}

const PLURAL = /^(\w+), plural,\s*([\s\S]*)$/;
const BRANCH = /^\s*(=\d+|zero|one|two|few|many|other)\s*\{/;

/**
 * `{count, plural, one {# problem} other {# problems}}` (ICU's form, `#` the number): the branch for the count in
 * this language (an exact `=0` first, then its Intl.PluralRules category, else `other`); null when malformed.
 */
function pluralBranch(locale: Locale, count: number, branches: string): string | null {
  const found = new Map<string, string>();
  let rest = branches;
  while (rest.trim()) {
    const head = BRANCH.exec(rest);
    if (!head) return null;
    const open = head[0].length - 1;
    const close = closingBrace(rest, open);
    if (close < 0) return null;
    found.set(head[1]!, rest.slice(open + 1, close));
    rest = rest.slice(close + 1);
  }
  const branch = found.get(`=${count}`) ?? found.get(pluralCategory(count, locale)) ?? found.get('other');
  return branch === undefined ? null : branch.replace(/#/g, String(count));
}

/**
 * Fills `{name}` placeholders and `{name, plural, …}` choices; an unknown placeholder (or a plural without its
 * count) stays visible so a missing value is noticed in review.
 */
function fill(locale: Locale, template: string, vars: TranslateVars | undefined): string {
  let out = '';
  let i = 0;
  while (i < template.length) {
    const open = template.indexOf('{', i);
    const close = open < 0 ? -1 : closingBrace(template, open);
    if (close < 0) return out + template.slice(i);
    out += template.slice(i, open);
    const whole = template.slice(open, close + 1);
    const inner = whole.slice(1, -1);
    const plural = PLURAL.exec(inner);
    if (/^\w+$/.test(inner)) out += vars && inner in vars ? String(vars[inner]) : whole;
    else if (plural && vars && typeof vars[plural[1]!] === 'number') {
      const branch = pluralBranch(locale, vars[plural[1]!] as number, plural[2]!);
      out += branch === null ? whole : fill(locale, branch, vars);
    } else out += whole;
    i = close + 1;
  }
  return out;
}

export function translate(locale: Locale, key: MessageKey, vars?: TranslateVars): string {
  return fill(locale, dictionaries[locale][key], vars);
}

/** zh, zh-CN, zh-TW ... get Chinese; every other browser language gets English. */
export function localeFromLanguage(language: string | undefined): Locale {
  return language?.toLowerCase().startsWith('zh') ? 'zh' : 'en';
}

/** True for keys of the dictionaries; lets a screen translate a server enum value and show unknown ones as sent. */
export function isMessageKey(key: string): key is MessageKey {
  return Object.prototype.hasOwnProperty.call(en, key);
}
