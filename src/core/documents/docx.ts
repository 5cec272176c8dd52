import { AlignmentType, Document, HeadingLevel, LevelFormat, Packer, Paragraph, Table, TableCell, TableRow, TextRun, WidthType, type IRunOptions } from 'docx';
import type { DocumentBlock } from './blocks.js';

const ORDERED_LIST = 'ordered-list';

/**
 * Characters XML 1.0 cannot hold (C0 controls other than tab and line breaks, U+FFFE/U+FFFF, lone surrogates): one
 * of them in user text and Word refuses to open the file, so each becomes U+FFFD.
 */
const NOT_XML = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** `text` with every character XML cannot carry replaced by U+FFFD. */
const xmlSafe = (text: string) => text.replace(NOT_XML, '\uFFFD');

/** One run per line, joined by line breaks: a newline inside a Word run would show as a space. */
function runs(text: string, style: Omit<IRunOptions, 'text' | 'break'> = {}): TextRun[] {
  return xmlSafe(text)
    .split(/\r\n|\r|\n/)
    .map((line, index) => new TextRun({ ...style, text: line, break: index ? 1 : undefined }));
}

const HEADINGS = { 1: HeadingLevel.TITLE, 2: HeadingLevel.HEADING_1, 3: HeadingLevel.HEADING_2 } as const;

/** How each tone of note stands out: a warning is highlighted, a caution is set in a muted brown. */
const NOTE_STYLE = {
  warning: { italics: true, highlight: 'yellow' },
  caution: { italics: true, color: '7F6000' },
} as const satisfies Record<Extract<DocumentBlock, { kind: 'note' }>['tone'], Omit<IRunOptions, 'text' | 'break'>>;

function table(columns: string[], rows: string[][]): Table {
  const row = (cells: string[], isHeader: boolean) =>
    new TableRow({
      tableHeader: isHeader,
      children: cells.map((cell) => new TableCell({ children: [new Paragraph({ children: runs(cell, { bold: isHeader }) })] })),
    });
  return new Table({ width: { size: 100, type: WidthType.PERCENTAGE }, rows: [row(columns, true), ...rows.map((cells) => row(cells, false))] });
}

function paragraphs(blocks: readonly DocumentBlock[]): Array<Paragraph | Table> {
  // Each ordered list is its own instance of the numbering, so every list starts again at 1.
  let listInstance = 0;
  return blocks.flatMap((item): Array<Paragraph | Table> => {
    switch (item.kind) {
      case 'heading': return [new Paragraph({ heading: HEADINGS[item.level], children: runs(item.text) })];
      case 'paragraph': return [new Paragraph({ children: runs(item.text) })];
      case 'field': return [new Paragraph({ children: [new TextRun({ text: `${xmlSafe(item.label)}: `, bold: true }), ...runs(item.value)] })];
      case 'list': {
        listInstance += 1;
        const instance = listInstance;
        return item.items.map((text) =>
          new Paragraph({
            children: runs(text),
            ...(item.ordered ? { numbering: { reference: ORDERED_LIST, level: 0, instance } } : { bullet: { level: 0 } }),
          }),
        );
      }
      // An empty paragraph after a table: Word joins two adjacent tables into one.
      case 'table': return [table(item.columns, item.rows), new Paragraph({})];
      case 'note': {
        const style = NOTE_STYLE[item.tone];
        return [new Paragraph({ children: [new TextRun({ ...style, text: `${xmlSafe(item.label)}: `, bold: true }), ...runs(item.text, style)] })];
      }
    }
  });
}

/** The blocks as a Word document (.docx); `title` goes into the document's properties. */
export async function renderDocx(blocks: readonly DocumentBlock[], options: { title: string }): Promise<Buffer> {
  const document = new Document({
    creator: 'ClinAgent',
    title: xmlSafe(options.title),
    styles: {
      // Word picks the East Asian font for Chinese characters; SimSun ships with every Chinese Windows and Office.
      default: { document: { run: { font: { ascii: 'Calibri', hAnsi: 'Calibri', cs: 'Calibri', eastAsia: 'SimSun' } } } },
    },
    numbering: {
      config: [
        {
          reference: ORDERED_LIST,
          levels: [{ level: 0, format: LevelFormat.DECIMAL, text: '%1.', alignment: AlignmentType.START, style: { paragraph: { indent: { left: 720, hanging: 360 } } } }],
        },
      ],
    },
    sections: [{ children: paragraphs(blocks) }],
  });
  return Packer.toBuffer(document);
}
