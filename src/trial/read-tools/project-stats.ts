import { z } from 'zod';
import type { Db } from '../../core/db/connect.js';
import type { ToolDefinition } from '../../core/tools/registry.js';
import { identifierMask } from '../identifiers.js';
import { listQcRuns } from '../qc/qc-runs.js';
import { getDictionary, getEvents } from '../store/dictionary.js';
import { countRecords, listSites } from '../store/records.js';
import { countQueriesByStatus, selectLastImportAt, selectRecordIds } from './stats-sql.js';

const Args = z.object({});
type Args = z.infer<typeof Args>;

/** Enough ids for a model to pick one, few enough for a prompt. */
const RECORD_ID_SAMPLE = 50;
const QC_RUNS_SHOWN = 5;

/**
 * Counts and schedule of the project: nothing in it is a field value. Record ids are listed (a sample) so the
 * model can name a real subject, unless the project flags its record id field as an identifier.
 */
export function projectStatsTool(db: Db, projectId: string): ToolDefinition<Args> {
  return {
    name: 'get_project_stats',
    description: 'Overview of this project: subjects and record rows, sites with their subject counts, the visit schedule with windows, when data was last imported, data queries by status and the latest QC runs. Also lists some record ids.',
    schema: Args,
    async run() {
      const [counts, sites, events, lastImportAt, queries, qcRuns, dictionary, mask] = await Promise.all([
        countRecords(db, projectId),
        listSites(db, projectId),
        getEvents(db, projectId),
        selectLastImportAt(db, projectId),
        countQueriesByStatus(db, projectId),
        listQcRuns(db, projectId, QC_RUNS_SHOWN),
        getDictionary(db, projectId),
        identifierMask(db, projectId, undefined),
      ]);
      const recordIdField = dictionary[0]?.fieldName;
      const mayListIds = !(recordIdField && mask.isIdentifier(recordIdField));
      const recordIds = mayListIds ? await selectRecordIds(db, projectId, RECORD_ID_SAMPLE) : [];
      return {
        subjects: counts.subjects,
        record_rows: counts.rows,
        sites: sites.map((site) => ({ site: site.site, subjects: site.subjects })),
        events: events.map((event) => ({ event: event.eventName, label: event.label, arm: event.armNum, day_offset: event.dayOffset, window_before: event.windowBefore, window_after: event.windowAfter })),
        last_import_at: lastImportAt?.toISOString() ?? null,
        queries_by_status: queries,
        live_queries: queries.held + queries.open + queries.answered + queries.reopened,
        last_qc_runs: qcRuns.map((run) => ({
          id: run.id,
          skill: run.skillId,
          status: run.status,
          created_at: run.createdAt,
          finished_at: run.finishedAt,
          total: run.total,
          completed: run.completed,
          failed: run.failed,
          waiting_review: run.suspended,
          pending: run.pending + run.running,
        })),
        record_ids: mayListIds ? { sample: recordIds, complete: recordIds.length === counts.subjects } : { sample: [], note: 'record ids are identifiers in this project; ask the user for the id' },
      };
    },
  };
}
