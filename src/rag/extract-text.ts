import path from 'node:path';
import { extractText as extractPdfText, getDocumentProxy } from 'unpdf';
import { ClinAgentError, errorMessage } from '../core/errors.js';

const TEXT_EXTENSIONS = ['.txt', '.md', '.markdown'];
const PDF_EXTENSIONS = ['.pdf'];
export const SUPPORTED_EXTENSIONS: readonly string[] = [...TEXT_EXTENSIONS, ...PDF_EXTENSIONS];

/**
 * The text of an uploaded file, ready for chunkText. Line endings become "\n" so chunk offsets mean the
 * same on every platform. PDF pages are joined by a blank line, which the chunker treats as a paragraph break.
 */
export async function extractText(fileName: string, bytes: Uint8Array): Promise<string> {
  const extension = path.extname(fileName).toLowerCase();
  if (TEXT_EXTENSIONS.includes(extension)) return normalizeNewlines(refuseNul(fileName, decodeUtf8(fileName, bytes)));
  if (PDF_EXTENSIONS.includes(extension)) return normalizeNewlines(await readPdf(fileName, bytes));
  throw new ClinAgentError(
    'UNSUPPORTED_FILE',
    `"${fileName}" is not a supported document type. Upload one of ${SUPPORTED_EXTENSIONS.join(', ')}; convert Word files to PDF first.`,
    { fileName, allowed: SUPPORTED_EXTENSIONS },
  );
}

function decodeUtf8(fileName: string, bytes: Uint8Array): string {
  try {
    // fatal: a GBK-encoded file (common from Chinese Windows editors) would otherwise turn into mojibake silently.
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes).replace(/^\uFEFF/, '');
  } catch (error) {
    throw new ClinAgentError('VALIDATION_FAILED', `"${fileName}" is not valid UTF-8 text. Save it as UTF-8 (e.g. "Save with encoding: UTF-8" in your editor) and upload it again.`, { fileName }, { cause: error });
  }
}

async function readPdf(fileName: string, bytes: Uint8Array): Promise<string> {
  let pages: string[];
  try {
    // pdf.js takes ownership of (detaches) the buffer it is given; copy so the caller's bytes stay usable.
    const pdf = await getDocumentProxy(new Uint8Array(bytes), { verbosity: 0 });
    pages = (await extractPdfText(pdf, { mergePages: false })).text;
  } catch (error) {
    throw new ClinAgentError('VALIDATION_FAILED', `"${fileName}" could not be read as a PDF (${errorMessage(error)}). Check that the file is a complete, unencrypted PDF and upload it again.`, { fileName }, { cause: error });
  }
  const text = pages.map((page) => page.trim()).filter(Boolean).join('\n\n');
  if (!text) {
    throw new ClinAgentError('VALIDATION_FAILED', `"${fileName}" has no text layer (probably a scanned PDF). Run OCR on it, or upload the text as .txt or .md.`, { fileName });
  }
  return text;
}

/**
 * Text with NUL characters is not a text document (UTF-16 saved as .txt puts one after every ASCII letter, or
 * it is a binary file renamed), and PostgreSQL text cannot hold U+0000: refuse it by name rather than fail
 * on insert.
 */
function refuseNul(fileName: string, text: string): string {
  if (!text.includes('\u0000')) return text;
  throw new ClinAgentError('VALIDATION_FAILED', `"${fileName}" contains NUL characters, so it is not plain UTF-8 text (it may be UTF-16 or a binary file). Save it as UTF-8 text and upload it again.`, { fileName });
}

function normalizeNewlines(text: string): string {
  return text.replace(/\r\n?/g, '\n');
}
