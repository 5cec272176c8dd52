/** A part of a consult reply: the model's words, or a warning the server put in (risk advice, a medicine taken out). */
export interface ReplyBlock {
  kind: 'text' | 'warning';
  text: string;
}

const WARNING_SIGN = '⚠️';

/**
 * The server marks what it puts into a reply with a warning sign: the risk advice that leads it (risk/level-guidance.ts)
 * and the warning that replaces a sentence naming a medicine the patient must not take (safety/without-excluded-drugs.ts).
 * Each such part is shown as a warning of its own, from its sign to the end of its paragraph, so it cannot be read past
 * as one more line of the model's answer.
 */
export function replyBlocks(text: string): ReplyBlock[] {
  const blocks: ReplyBlock[] = [];
  for (const paragraph of text.split(/\n\s*\n/)) {
    const at = paragraph.indexOf(WARNING_SIGN);
    const before = (at < 0 ? paragraph : paragraph.slice(0, at)).trim();
    if (before) blocks.push({ kind: 'text', text: before });
    if (at >= 0) {
      const warning = paragraph.slice(at).trim();
      if (warning !== WARNING_SIGN) blocks.push({ kind: 'warning', text: warning });
    }
  }
  return blocks;
}
