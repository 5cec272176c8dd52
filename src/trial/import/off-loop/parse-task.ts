import type { MessagePort } from 'node:worker_threads';
import { ClinAgentError, type ErrorCode } from '../../../core/errors.js';
import type { TrialEvent, TrialRecord } from '../../store/types.js';
import { checkRedcapCsvFiles } from '../check-redcap-csv.js';
import type { RedcapCsvFiles } from '../import-redcap-csv.js';
import { checkOdmFile } from '../odm/check-odm.js';
import type { OdmImportFile } from '../odm/import-odm.js';
import { checkRedcapAnswers, type RedcapApiRequest } from '../../redcap/check-redcap-answers.js';
import type { TrialExport } from '../write-trial-export.js';

/** One import's files, or a REDCap API sync's answers, to decode, parse and check. */
export type ParseRequest =
  | { kind: 'csv'; files: RedcapCsvFiles; storedEvents: ReadonlyArray<TrialEvent> }
  | { kind: 'odm'; file: OdmImportFile }
  | ({ kind: 'redcap-api' } & RedcapApiRequest);

/** The request as the worker thread receives it (structured clone), with the port its records go back on. */
export type ParseTask = ParseRequest & {
  /** Where the records go, in chunks (see RECORD_CHUNK_CHARS); the answer itself carries none. */
  records: MessagePort;
};

/**
 * A message on the records port: a chunk of records as JSON text. Text, not objects: Node rebuilds every message
 * waiting on a port in one go, and rebuilding records of 10 000 fields held the server's thread for seconds;
 * a string arrives as one copy, and the server parses one chunk per turn of its event loop.
 */
export type RecordChunk = string;

// Characters of values per chunk: parsing one takes a few milliseconds.
const RECORD_CHUNK_CHARS = 256 * 1024;

/**
 * The worker's answer. A refusal travels as code, message and details, since a thrown error crossing the
 * thread boundary keeps only its message, and the route answers by code (422 with every problem, 413, 400).
 */
export type ParseOutcome = { ok: true; value: TrialExport; recordChunks: number } | { ok: false; error: { code: ErrorCode; message: string; details: Record<string, unknown> } };

/** The worker thread's entry (piscina calls the default export with each task). */
export default function parseTask(task: ParseTask): ParseOutcome {
  try {
    const value = task.kind === 'csv' ? checkRedcapCsvFiles(task.files, task.storedEvents) : task.kind === 'odm' ? checkOdmFile(task.file) : checkRedcapAnswers(task);
    const recordChunks = sendInChunks(value.records, task.records);
    return { ok: true, value: { ...value, records: [] }, recordChunks };
  } catch (error) {
    if (!ClinAgentError.isInstance(error)) throw error;
    return { ok: false, error: { code: error.code, message: error.message, details: error.details } };
  }
}

function sendInChunks(records: ReadonlyArray<TrialRecord>, port: MessagePort): number {
  let chunks = 0;
  let chunk: TrialRecord[] = [];
  let chars = 0;
  const send = () => {
    port.postMessage(JSON.stringify(chunk) satisfies RecordChunk);
    chunks += 1;
    chunk = [];
    chars = 0;
  };
  for (const record of records) {
    chunk.push(record);
    for (const value of Object.values(record.data)) chars += typeof value === 'string' ? value.length + 8 : 8;
    if (chars >= RECORD_CHUNK_CHARS) send();
  }
  if (chunk.length > 0) send();
  port.close();
  return chunks;
}
