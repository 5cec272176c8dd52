import type { TrialStore } from '../../store/trial-store.js';
import { parseOffLoop } from '../off-loop/parse-off-loop.js';
import { writeTrialExport, type TrialExport, type TrialImportSummary } from '../write-trial-export.js';

/** A CDISC ODM 1.3 file with metadata and clinical data: text, or the uploaded bytes. */
export interface OdmImportFile {
  odm: string | Uint8Array;
  /** The user's file name, for messages. */
  fileName?: string;
}

/**
 * Imports a trial exported as CDISC ODM 1.3 (REDCap, OpenClinica, Castor...) into the same dictionary, schedule,
 * arms and records the CSV import writes, so QC and the record page work unchanged. As with CSV, the whole file
 * is checked first; any problem raises IMPORT_INVALID listing each by XML line and element, and nothing is written.
 */
export async function importOdm(store: TrialStore, projectId: string, file: OdmImportFile, actor: string, options: { reason?: string } = {}): Promise<TrialImportSummary> {
  return writeTrialExport(store, projectId, await checkOdm(file), actor, options.reason ?? 'CDISC ODM import');
}

/**
 * Decodes, parses and checks the whole file, writing nothing: the export as the import writes it, or
 * IMPORT_INVALID listing each problem by line and element. The import and its preview both go through here.
 * The XML is read in a worker thread: millions of elements are seconds of parsing, which on the server's thread
 * would stop every other request.
 */
export async function checkOdm(file: OdmImportFile): Promise<TrialExport> {
  return parseOffLoop({ kind: 'odm', file });
}
