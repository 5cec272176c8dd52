/**
 * Text PostgreSQL cannot store: U+0000 in text or jsonb ("invalid byte sequence"), and a lone UTF-16 surrogate,
 * which JSON.parse accepts ("\ud800") but jsonb refuses. One definition for the request edge (src/http) and for
 * text that arrives inside files or REDCap API answers (src/trial/import).
 */
export type UnstorableKind = 'nul' | 'surrogate';

/** What makes `text` unstorable, or undefined when it can be stored. */
export function unstorableKind(text: string): UnstorableKind | undefined {
  if (text.includes('\u0000')) return 'nul';
  return isWellFormed(text) ? undefined : 'surrogate';
}

/** String.prototype.isWellFormed: ES2024, present in Node 20, missing from the ES2023 lib this project compiles against. */
function isWellFormed(text: string): boolean {
  return (text as string & { isWellFormed(): boolean }).isWellFormed();
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** `text` as an error message may show it: NULs and lone surrogates written as their escapes. */
export function escapeUnstorable(text: string): string {
  return text.replace(/\u0000/g, '\\u0000').replace(LONE_SURROGATE, (unit) => `\\u${unit.charCodeAt(0).toString(16)}`);
}
