import { ClinAgentError } from '../../core/errors.js';

/**
 * What one import reads. The upload limit (UPLOAD_MAX_BYTES, 50 MB) bounds the bytes; these bound what the
 * bytes may expand into, since 50 MB of commas or of `<a/>` is millions of cells or elements, each an object
 * the import builds, compares and writes. Each is far above a real export of that size (a 50 MB REDCap ODM
 * holds about a million ItemData elements; a large longitudinal CSV export a few million cells), and each
 * refusal names the limit and how to split the file.
 */
export const IMPORT_LIMITS = {
  /** XML elements of one ODM file, metadata and clinical data together. */
  odmElements: 2_000_000,
  /** Fields of one data dictionary (REDCap projects rarely pass 3 000). */
  dictionaryFields: 20_000,
  /** Rows (record x event) of one records file. */
  recordRows: 500_000,
  /** Cells (rows x columns) of one records file. */
  recordCells: 10_000_000,
} as const;

export type ImportLimit = keyof typeof IMPORT_LIMITS;

const HOW_TO_SPLIT: Record<ImportLimit, string> = {
  odmElements: 'Export the clinical data in parts (REDCap: a report or a record range per export; OpenClinica and Castor: per site or per subject range) and import each part; the metadata may be repeated in each file.',
  dictionaryFields: 'A project this large is usually several projects; import the forms QC needs, or split the dictionary and import it with the records of its forms.',
  recordRows: 'Export the records in parts (REDCap: Data Exports > a filter by record range, site (data access group) or event) and import each part; an import keeps the records it does not name.',
  recordCells: 'Export the records in parts, by record range or site, or with fewer forms or events per file (REDCap: Data Exports > custom report), and import each part; an import keeps the records it does not name.',
};

const WHAT: Record<ImportLimit, string> = {
  odmElements: 'XML elements',
  dictionaryFields: 'fields',
  recordRows: 'rows',
  recordCells: 'cells (rows x columns)',
};

/**
 * 413 naming the file, the limit it went over, and how to split it. Reading stops at the first element, row or
 * cell over the limit, so the file's own count is not known: only that it has more.
 */
export function importTooLarge(limit: ImportLimit, source: string): ClinAgentError {
  const max = IMPORT_LIMITS[limit];
  return new ClinAgentError(
    'UPLOAD_TOO_LARGE',
    `${source} has more than ${max.toLocaleString('en-US')} ${WHAT[limit]}, the most one import reads (limit ${limit}); nothing was imported. ${HOW_TO_SPLIT[limit]}`,
    { source, limit, max },
  );
}
