import { isRawStructure } from '../core/structured/looks-like-data.js';

/**
 * The last gate before the person: an answer the question engine accepted can still be a data structure the model
 * wrote for a program (a JSON decision, a half-closed object) rather than prose. Shown as it is, it reads as a
 * fault to a coordinator, and its keys and values mean nothing to them. The rule is every prose writer's (the
 * weekly reports use it too), so it lives in core; it is re-exported here for the chat.
 */
export { isRawStructure };

/** What could still turn out to open a structure: whitespace, a code fence, one bracket. */
const MAY_OPEN_STRUCTURE = /^\s*(?:```[a-z]*\s*|`{1,2})?(?:[{[]\s*)?$/i;

/**
 * The same rule for an answer that streams: its first characters are held back until they show whether it opens
 * as a structure; a structure is never streamed (the final answer says why), prose passes through as it comes.
 * `push` returns the text to stream now; `end` returns what is still held when the answer ends.
 */
export function createStructureHold(): { push(text: string): string; end(): string } {
  let held = '';
  let state: 'deciding' | 'prose' | 'structure' = 'deciding';
  return {
    push(text) {
      if (state === 'prose') return text;
      if (state === 'structure') return '';
      held += text;
      if (MAY_OPEN_STRUCTURE.test(held)) return '';
      state = isRawStructure(held) ? 'structure' : 'prose';
      const out = state === 'prose' ? held : '';
      held = '';
      return out;
    },
    end() {
      const out = state === 'deciding' ? held : '';
      held = '';
      return out;
    },
  };
}
