import { create } from 'zustand';
import { localeFromLanguage, type Locale } from '../i18n/translate';

// Persisted separately from the token: the chosen language should survive sign-out.
const LOCALE_KEY = 'clinagent.locale';

function initialLocale(): Locale {
  try {
    const saved = localStorage.getItem(LOCALE_KEY);
    if (saved === 'en' || saved === 'zh') return saved;
  } catch {
    // No storage: fall back to the browser language below.
  }
  return localeFromLanguage(navigator.language);
}

interface LocaleState {
  locale: Locale;
  setLocale(locale: Locale): void;
}

export const useLocaleStore = create<LocaleState>()((set) => ({
  locale: initialLocale(),
  setLocale(locale) {
    try {
      localStorage.setItem(LOCALE_KEY, locale);
    } catch {
      // The choice still applies to this page load.
    }
    set({ locale });
  },
}));
