import { availableParallelism } from 'node:os';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { MessageChannel } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { ClinAgentError } from '../../../core/errors.js';
import type { TrialExport } from '../write-trial-export.js';
import type { TrialRecord } from '../../store/types.js';
import type { ParseOutcome, ParseRequest, ParseTask, RecordChunk } from './parse-task.js';

// A worker that has parsed nothing for this long ends; the next import starts one again (some 50 ms).
const IDLE_MS = 30_000;
// A file that expands past this in memory ends its worker, not the server.
const WORKER_HEAP_MB = 4096;

let pool: Piscina<ParseTask, ParseOutcome> | undefined;

/**
 * Runs the import's decode, parse and check (an upload's files, or a REDCap API sync's answers) in a worker thread, so the server's event loop keeps answering
 * (the health check, other users' pages) while a 50 MB export is read. One thread on a two-core machine,
 * leaving the other core to the server; more imports at once wait their turn.
 */
export async function parseOffLoop(request: ParseRequest): Promise<TrialExport> {
  pool ??= new Piscina<ParseTask, ParseOutcome>({
    ...workerEntry(),
    minThreads: 0,
    maxThreads: Math.max(1, Math.floor(availableParallelism() / 2)),
    idleTimeout: IDLE_MS,
    resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB },
  });
  // The records come back as chunks of JSON text on a port of their own, parsed here one chunk per turn of
  // the event loop, so no single piece of work holds it (a 50 MB export as one answer held it ~1 s).
  const { port1, port2 } = new MessageChannel();
  const chunks: RecordChunk[] = [];
  let allReceived: (() => void) | undefined;
  port1.on('message', (chunk: RecordChunk) => {
    chunks.push(chunk);
    allReceived?.();
  });
  let outcome: ParseOutcome;
  try {
    outcome = await pool.run({ ...request, records: port2 }, { transferList: [port2, ...movedBuffers(request)] });
  } catch (error) {
    port1.close();
    if ((error as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY') {
      throw new ClinAgentError('UPLOAD_TOO_LARGE', `The import's files expand into more than the ${WORKER_HEAP_MB} MB of memory one import may use; nothing was imported. Export the data in parts (by record range, site or form) and import each part.`, { limit: 'workerHeapMb', max: WORKER_HEAP_MB });
    }
    throw error;
  }
  if (!outcome.ok) {
    port1.close();
    throw new ClinAgentError(outcome.error.code, outcome.error.message, outcome.error.details);
  }
  const expected = outcome.recordChunks;
  if (chunks.length < expected) await new Promise<void>((resolve) => (allReceived = () => chunks.length >= expected && resolve()));
  port1.close();
  const records: TrialRecord[] = [];
  for (const [index, chunk] of chunks.entries()) {
    if (index > 0) await yieldToEventLoop();
    for (const record of JSON.parse(chunk) as TrialRecord[]) records.push(record);
    chunks[index] = '';
  }
  return { ...outcome.value, records };
}

/**
 * Buffers handed to the worker rather than copied: a REDCap sync's answers (tens of MB each), which nothing on
 * this side reads again. Copying them would be work on the server's thread that grows with the answer.
 */
function movedBuffers(request: ParseRequest): ArrayBuffer[] {
  return request.kind === 'redcap-api' ? Object.values(request.answers).flatMap((segments) => segments ?? []) : [];
}

/**
 * The worker's module: the compiled parse-task.js next to this file when the server runs from dist/, or the
 * TypeScript source when it runs from src/ (tsx, vitest), which the worker then loads through tsx as well.
 */
function workerEntry(): { filename: string; execArgv?: string[] } {
  const fromSource = import.meta.url.endsWith('.ts');
  const filename = new URL(`./parse-task.${fromSource ? 'ts' : 'js'}`, import.meta.url).href;
  return fromSource ? { filename, execArgv: ['--import', 'tsx'] } : { filename };
}
