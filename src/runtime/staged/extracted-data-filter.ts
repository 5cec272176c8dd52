import { EXTRACTED_DATA_TAGS } from './extraction.js';

/**
 * Streams a staged agent's reply without its `<extracted_data>` block: the user watches the answer being written
 * and must not watch the JSON that follows it. Deltas pass through until the opening tag; from there nothing more
 * is emitted (the block ends the reply, splitExtractedData takes it from the whole text). A delta ending in what may
 * be the start of the tag (`<extra`), or in the blank lines and markdown fence (```` ```json ````) a model puts before
 * the block, is held back until the next delta shows whether the tag follows, so the streamed text is the text the
 * final message will show.
 */
interface ExtractedDataFilter {
  /** The part of the delta that is safe to show now (possibly '' while a possible tag is held back). */
  push(delta: string): string;
  /** What was held back and turned out not to precede a tag; '' once the tag was seen. */
  end(): string;
}

const TAG = EXTRACTED_DATA_TAGS.open.toLowerCase();
/** Blank space and an opening fence (its backticks possibly incomplete) that may come right before the tag. */
const BEFORE_TAG = /\s*(?:`{1,3}[A-Za-z]*)?\s*$/;

export function createExtractedDataFilter(): ExtractedDataFilter {
  let held = '';
  let isInBlock = false;

  return {
    push(delta) {
      if (isInBlock) return '';
      const pending = held + delta;
      const tagAt = pending.toLowerCase().indexOf(TAG);
      if (tagAt >= 0) {
        isInBlock = true;
        held = '';
        return pending.slice(0, tagAt).replace(BEFORE_TAG, '');
      }
      const keep = heldLength(pending);
      held = pending.slice(pending.length - keep);
      return pending.slice(0, pending.length - keep);
    },
    end() {
      if (isInBlock) return '';
      // No tag came: a partial tag was just text, and trailing blank space the final message trims anyway.
      const rest = held.trimEnd();
      held = '';
      return rest;
    },
  };
}

/** How many characters at the end of `text` might still turn out to precede (or begin) the tag. */
function heldLength(text: string): number {
  const lower = text.toLowerCase();
  let partial = 0;
  for (let length = Math.min(TAG.length - 1, lower.length); length > 0; length--) {
    if (lower.endsWith(TAG.slice(0, length))) {
      partial = length;
      break;
    }
  }
  const before = text.slice(0, text.length - partial);
  const lead = BEFORE_TAG.exec(before);
  return partial + (lead ? lead[0].length : 0);
}
