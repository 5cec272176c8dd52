import { and, asc, eq, gt } from 'drizzle-orm';
import type { Db } from '../../core/db/connect.js';
import { trialRecords } from '../../core/db/schema/trial.js';
import { ClinAgentError } from '../../core/errors.js';
import { loadRecordContexts, type RecordContext } from '../sop/record-context.js';

/**
 * Records per batch. Each batch is four queries (its record ids, then loadRecordContexts' three) whatever its size,
 * so a 10 000-subject trial is read in about 80 queries; 500 subjects of a few visits each stay a few MB in memory.
 */
export const RECORD_BATCH_SIZE = 500;

/**
 * Calls `visit` with the project's records as QC sees them (loadRecordContexts), in record-id order, a batch at a
 * time: set-wise reads, never one query per record, and memory bounded by the batch whatever the trial's size.
 * With `recordId`, only that record; NOT_FOUND when it does not exist. Returns how many records were visited.
 */
export async function forEachRecordBatch(db: Db, projectId: string, visit: (records: RecordContext[]) => Promise<void>, options: { recordId?: string; batchSize?: number } = {}): Promise<number> {
  if (options.recordId !== undefined) {
    const record = (await loadRecordContexts(db, projectId, [options.recordId])).get(options.recordId);
    if (!record) {
      throw new ClinAgentError('NOT_FOUND', `Record "${options.recordId}" does not exist in project "${projectId}". Check the record id (GET /api/iit/projects/${projectId}/records), or leave recordId out to try the whole trial.`, { projectId, recordId: options.recordId });
    }
    await visit([record]);
    return 1;
  }
  const batchSize = options.batchSize ?? RECORD_BATCH_SIZE;
  let visited = 0;
  let after: string | undefined;
  for (;;) {
    // Keyset paging on the primary key (project, record, event): each page starts where the last one ended.
    const page = await db
      .selectDistinct({ recordId: trialRecords.recordId })
      .from(trialRecords)
      .where(after === undefined ? eq(trialRecords.projectId, projectId) : and(eq(trialRecords.projectId, projectId), gt(trialRecords.recordId, after)))
      .orderBy(asc(trialRecords.recordId))
      .limit(batchSize);
    if (!page.length) return visited;
    const ids = page.map((row) => row.recordId);
    const contexts = await loadRecordContexts(db, projectId, ids);
    // In record-id order, as the page came; the map is keyed but not ordered by it.
    await visit(ids.flatMap((id) => contexts.get(id) ?? []));
    visited += ids.length;
    if (ids.length < batchSize) return visited;
    after = ids[ids.length - 1];
  }
}
