/**
 * A protocol export as a short list of blocks, built once (outline.ts) and written out as Markdown or DOCX.
 * Every string is plain text, user text included; each writer escapes it for its own format.
 */
export type ExportBlock =
  | { kind: 'heading'; level: 1 | 2 | 3; text: string }
  | { kind: 'paragraph'; text: string }
  /** "Label: value" */
  | { kind: 'field'; label: string; value: string }
  | { kind: 'list'; ordered: boolean; items: string[] }
  | { kind: 'table'; columns: string[]; rows: string[][] }
  /** Required fields a stage has not filled yet, by their labels. */
  | { kind: 'missing'; fields: string[] }
  /** The stage is not completed: what it shows may still change. */
  | { kind: 'draft' };
