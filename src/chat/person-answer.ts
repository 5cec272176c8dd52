/**
 * The last gate before the person: an answer the question engine accepted can still be a data structure the model
 * wrote for a program (a JSON decision, a half-closed object) rather than prose. Shown as it is, it reads as a
 * fault to a coordinator, and its keys and values mean nothing to them.
 */
const STRUCTURE_START = /^\s*(?:```[a-z]*\s*)?(?:\{\s*"|\[\s*[{["])/i;

/** True when the whole answer opens as a JSON object or an array of objects, strings or arrays. */
export function isRawStructure(text: string): boolean {
  return STRUCTURE_START.test(text);
}
