/**
 * Chinese when the message has at least as many Han characters as English words, English otherwise. Record
 * ids and numbers are not words ("对 P003 做质控" is Chinese), and a few English words in a Chinese sentence
 * ("QC 一下 S003") leave it Chinese. A message with neither (empty, "???") is taken as Chinese, the language
 * most users of the assistant write in.
 */
export function detectLanguage(text: string): 'zh' | 'en' {
  const han = text.match(/\p{Script=Han}/gu)?.length ?? 0;
  const words = text.match(/\b[A-Za-z]{2,}\b/g)?.length ?? 0;
  if (han === 0 && words === 0) return 'zh';
  return han >= words ? 'zh' : 'en';
}
