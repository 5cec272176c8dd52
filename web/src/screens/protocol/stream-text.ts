/**
 * The reply while it streams, without its machine part. The model ends a reply with an <extracted_data> block
 * the server strips from the final message; while text arrives, the block (and a tag cut in half at the end of
 * what has come so far) would flash JSON at the researcher, so it is hidden here the same way.
 */
const OPEN_TAG = '<extracted_data>';

export function visibleStreamText(text: string): string {
  const start = text.indexOf(OPEN_TAG);
  if (start >= 0) return text.slice(0, start).trimEnd();
  // A tag still being written: "...answer.\n<extra" must not show "<extra" for a moment.
  for (let length = Math.min(OPEN_TAG.length - 1, text.length); length > 0; length -= 1) {
    if (text.endsWith(OPEN_TAG.slice(0, length))) return text.slice(0, text.length - length).trimEnd();
  }
  return text;
}
