/**
 * A document as a short list of blocks, built once by whoever owns the content (a protocol outline, a consult
 * dossier) and written out as Markdown or DOCX by the renderers beside this file. Every string is plain text, user
 * text included; each renderer escapes it for its own format.
 */
export type DocumentBlock =
  | { kind: 'heading'; level: 1 | 2 | 3; text: string }
  | { kind: 'paragraph'; text: string }
  /** "Label: value" */
  | { kind: 'field'; label: string; value: string }
  | { kind: 'list'; ordered: boolean; items: string[] }
  | { kind: 'table'; columns: string[]; rows: string[][] }
  /**
   * "Label: text" set apart from the body (a blockquote in Markdown). `warning` asks for attention (what is
   * missing, a red flag) and is highlighted in Word; `caution` qualifies what surrounds it (a draft, a disclaimer).
   */
  | { kind: 'note'; tone: 'warning' | 'caution'; label: string; text: string };
