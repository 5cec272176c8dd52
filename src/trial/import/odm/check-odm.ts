import { ClinAgentError } from '../../../core/errors.js';
import { decodeUploadText } from '../decode-upload.js';
import type { TrialExport } from '../write-trial-export.js';
import type { OdmImportFile } from './import-odm.js';
import { readOdmClinicalData } from './odm-clinical-data.js';
import { readOdmMetadata } from './odm-metadata.js';
import { elementPath, odmInvalid, type OdmProblem } from './odm-problems.js';
import { readOdmXml, type OdmDocument } from './read-odm-xml.js';

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
  if (records.value.length === 0) throw odmInvalid([noRecordProblem(document.value, source)]);
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

/**
 * A file from which no record would be imported is refused, never answered "importable, 0 subjects": either
 * it has no subject data (a metadata-only export) or its subjects hold no forms this import can read.
 */
function noRecordProblem(document: OdmDocument, source: string): OdmProblem {
  const { subjects } = document;
  if (subjects.length === 0) {
    return { source, line: document.root.line || 1, element: 'ClinicalData', field: '(file)', value: '', problem: 'the file has no SubjectData, so no record would be imported; export the project with its data (REDCap: "CDISC ODM (XML)" with "all data", not metadata only; OpenClinica and Castor: the full ODM 1.3 export with clinical data)' };
  }
  const first = subjects[0]!;
  return {
    source,
    line: first.line,
    element: elementPath('SubjectData', 'SubjectKey', first.key),
    field: '(file)',
    value: '',
    problem: `the file has ${subjects.length} SubjectData element${subjects.length === 1 ? '' : 's'} but none holds a FormData with ItemGroupData and ItemData (directly, as REDCap writes a classic project, or inside StudyEventData), so no record would be imported; export the project again with its data`,
  };
}
