/**
 * Whether a text a model wrote for a person (an answer, a report) is a data structure instead: a JSON object, an
 * array of objects, strings or arrays, whole or half-closed, fenced or bare. Shown or stored as prose, its keys and
 * values mean nothing to the reader and it reads as a fault; every prose writer refuses it.
 */
const STRUCTURE_START = /^\s*(?:```[a-z]*\s*)?(?:\{\s*"|\[\s*[{["])/i;

/** True when the whole text opens as a JSON object or an array of objects, strings or arrays. */
export function isRawStructure(text: string): boolean {
  return STRUCTURE_START.test(text);
}
