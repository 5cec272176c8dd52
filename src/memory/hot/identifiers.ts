/**
 * A last check on what the model proposes, behind the prompt's own instruction: hot memory goes into every
 * prompt of the project, so a phone number, ID card number or e-mail address that slipped into a fact would
 * reach the model on every question. Trial subject ids (P001, S-0012) and dates stay: they are short or
 * split by separators, and the memory may need them.
 */
const IDENTIFIER_PATTERNS: readonly RegExp[] = [
  // Mainland mobile numbers, ID card numbers (17 digits and a check digit), and any long run of digits.
  /(?<!\d)\d{7,}[\dXx]?(?!\d)/,
  /(?<!\d)1[3-9]\d[\s-]?\d{4}[\s-]?\d{4}(?!\d)/,
  /[\w.+-]+@[\w-]+\.[\w.-]+/,
];

export function looksLikeIdentifier(text: string): boolean {
  return IDENTIFIER_PATTERNS.some((pattern) => pattern.test(text));
}
