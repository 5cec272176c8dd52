import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../core/paths.js';
import { extractText } from './extract-text.js';

const utf8 = (text: string) => new TextEncoder().encode(text);

describe('extractText', () => {
  it('decodes .txt, .md and .markdown as UTF-8, dropping the BOM and normalising line endings', async () => {
    const bytes = new Uint8Array([0xef, 0xbb, 0xbf, ...utf8('入组标准\r\n年龄 18-65 岁\r\n')]);
    for (const name of ['a.txt', 'B.MD', 'c.markdown']) {
      expect(await extractText(name, bytes)).toBe('入组标准\n年龄 18-65 岁\n');
    }
  });

  it('refuses text that is not UTF-8, saying how to fix it', async () => {
    const gbk = new Uint8Array([0xc8, 0xeb, 0xd7, 0xe9]); // "入组" in GBK
    await expect(extractText('protocol.txt', gbk)).rejects.toMatchObject({ code: 'VALIDATION_FAILED', message: expect.stringContaining('Save it as UTF-8') });
  });

  it('refuses a text file holding NUL characters (UTF-16 or binary), which PostgreSQL could not store', async () => {
    const utf16 = new Uint8Array([...'Visit 3'].flatMap((c) => [c.charCodeAt(0), 0]));
    await expect(extractText('amendment.txt', utf16)).rejects.toMatchObject({ code: 'VALIDATION_FAILED', message: expect.stringMatching(/"amendment\.txt" contains NUL characters.*Save it as UTF-8/) });
  });

  it('extracts the text of every PDF page, pages separated by a blank line', async () => {
    const bytes = new Uint8Array(readFileSync(`${packageRoot()}/test-data/rag/protocol-excerpt.pdf`));
    const text = await extractText('protocol-excerpt.pdf', bytes);
    expect(text).toBe('Protocol CA-001: inclusion criteria, adults aged 18 to 65.\n\nDosing pauses when ALT exceeds 3x ULN.');
    expect(bytes.byteLength).toBeGreaterThan(0); // the caller's buffer is not detached
  });

  it('reports a broken PDF as VALIDATION_FAILED', async () => {
    await expect(extractText('broken.pdf', utf8('not a pdf'))).rejects.toMatchObject({ code: 'VALIDATION_FAILED', message: expect.stringContaining('could not be read as a PDF') });
  });

  it('refuses other file types with UNSUPPORTED_FILE naming the allowed extensions', async () => {
    await expect(extractText('protocol.docx', utf8('x'))).rejects.toMatchObject({
      code: 'UNSUPPORTED_FILE',
      message: expect.stringContaining('.txt, .md, .markdown, .pdf'),
    });
  });
});
