import { en, type MessageKey, type Messages } from './en';
import { zh } from './zh';

export type Locale = 'en' | 'zh';
export type TranslateVars = Record<string, string | number>;
export type Translate = (key: MessageKey, vars?: TranslateVars) => string;

const dictionaries: Record<Locale, Messages> = { en, zh };

/** Fills `{name}` placeholders; an unknown placeholder stays visible so a missing value is noticed in review. */
export function translate(locale: Locale, key: MessageKey, vars?: TranslateVars): string {
  const template = dictionaries[locale][key];
  if (!vars) return template;
  return template.replace(/\{(\w+)\}/g, (match, name: string) => (name in vars ? String(vars[name]) : match));
}

/** zh, zh-CN, zh-TW ... get Chinese; every other browser language gets English. */
export function localeFromLanguage(language: string | undefined): Locale {
  return language?.toLowerCase().startsWith('zh') ? 'zh' : 'en';
}

/** True for keys of the dictionaries; lets a screen translate a server enum value and show unknown ones as sent. */
export function isMessageKey(key: string): key is MessageKey {
  return Object.prototype.hasOwnProperty.call(en, key);
}
