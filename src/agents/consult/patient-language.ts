/** The languages the consult's own sentences (risk advice, notices) are written in. */
export type PatientLanguage = 'en' | 'zh';

const HAN = /\p{Script=Han}/u;
const LATIN_WORD = /[A-Za-z]{2,}/;

/**
 * The language the patient writes in, from their messages, newest first: Chinese as soon as a message has Chinese
 * characters, English for Latin words; a message with neither ("39", "👍") says nothing, so an earlier one decides.
 * Our sentences must not depend on the model: it may be down, or answer in another language.
 */
export function patientLanguage(said: readonly string[]): PatientLanguage {
  for (const text of [...said].reverse()) {
    if (HAN.test(text)) return 'zh';
    if (LATIN_WORD.test(text)) return 'en';
  }
  return 'en';
}
