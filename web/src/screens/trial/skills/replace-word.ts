/**
 * Replaces every whole-word occurrence of `word` (a field or event name as written) with `replacement`. Names are
 * letters, digits and `_`, so `wieght` in `v2_arm_1.wieght` is replaced but `wieght_kg` is left alone.
 */
export function replaceWord(text: string, word: string, replacement: string): string {
  if (!word) return text;
  const escaped = word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return text.replace(new RegExp(`(?<![A-Za-z0-9_])${escaped}(?![A-Za-z0-9_])`, 'g'), replacement);
}
