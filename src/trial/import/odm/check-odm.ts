import { ClinAgentError } from '../../../core/errors.js';
import { decodeUploadText } from '../decode-upload.js';
import type { TrialExport } from '../write-trial-export.js';
import type { OdmImportFile } from './import-odm.js';
import { readOdmClinicalData } from './odm-clinical-data.js';
import { readOdmMetadata } from './odm-metadata.js';
import { odmInvalid } from './odm-problems.js';
import { readOdmXml } from './read-odm-xml.js';

/**
 * Decodes, parses and checks the whole file, writing nothing: the export as the import writes it, or
 * IMPORT_INVALID listing each problem by line and element. Runs in the import worker thread.
 */
export function checkOdmFile(file: OdmImportFile): TrialExport {
  const source = file.fileName ?? 'odm.xml';
  const text = typeof file.odm === 'string' ? file.odm : decodeOdm(file.odm, source);
  const document = readOdmXml(text, source);
  if (document.problems.length > 0) throw odmInvalid(document.problems);
  const metadata = readOdmMetadata(document.value, source);
  if (metadata.problems.length > 0) {
    // Checked against broken metadata, every ItemData would show misleading problems.
    throw odmInvalid([...metadata.problems, { source, line: 1, element: 'ClinicalData', field: '(file)', value: '', problem: 'not checked yet; fix the metadata problems first, then import again' }]);
  }
  const records = readOdmClinicalData(document.value.events, metadata.value, source);
  if (records.problems.length > 0) throw odmInvalid(records.problems);
  const { fields, events, arms } = metadata.value;
  return { fields, events, arms, records: records.value, warnings: records.warnings };
}

/**
 * EDCs write ODM as UTF-8 (or UTF-16 with a byte-order mark); the shared decoder also takes GBK, and names
 * anything else. Its advice is about saving CSV from Excel, so an ODM file gets advice about XML instead.
 */
function decodeOdm(bytes: Uint8Array, source: string): string {
  try {
    return decodeUploadText(bytes, { field: 'odm', filename: source });
  } catch (error) {
    if (!ClinAgentError.isInstance(error) || error.code !== 'VALIDATION_FAILED') throw error;
    throw new ClinAgentError('VALIDATION_FAILED', `The ODM file "${source}" is not UTF-8 text, so it was not imported: its labels and values would be stored garbled. Export it again from the EDC (ODM exports are UTF-8) and upload it without opening and saving it in another program.`, error.details);
  }
}
