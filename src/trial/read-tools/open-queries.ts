import { z } from 'zod';
import type { Db } from '../../core/db/connect.js';
import { ACTIVE_QUERY_STATUSES } from '../../core/db/schema/trial.js';
import type { ToolDefinition } from '../../core/tools/registry.js';
import { identifierMask } from '../identifiers.js';
import { listQueries, type DataQuery } from '../queries.js';

const Args = z.object({
  record_id: z.string().trim().min(1).optional().describe('only queries on this record (subject id)'),
  site: z.string().optional().describe('only queries of this site (REDCap data access group, e.g. "SITE-01")'),
  status: z.enum([...ACTIVE_QUERY_STATUSES, 'held']).optional().describe('open, answered, reopened or held (kept from the site until its review); every live status when absent'),
  limit: z.number().int().min(1).max(100).default(20).describe('at most this many queries, newest first'),
});
type Args = z.infer<typeof Args>;

const WITHHELD = 'identifier field';

/**
 * Live data queries of the project, newest first. The value each rule read is shown unless its field is an
 * identifier: the mask is built for no user, so it never grants access, whoever is chatting.
 */
export function openQueriesTool(db: Db, projectId: string): ToolDefinition<Args> {
  return {
    name: 'list_open_queries',
    description: 'List live data queries (open, answered, reopened, or held for review before the site sees them) raised by QC in this project: record, event, field, rule, message, status, times and the value the rule read. Filter by record, site or status.',
    schema: Args,
    async run({ record_id: recordId, site, status, limit }) {
      const statuses = status ? [status] : [...ACTIVE_QUERY_STATUSES, 'held' as const];
      // One page per status, one more than asked, so the merged list knows whether more exist.
      const pages = await Promise.all(statuses.map((s) => listQueries(db, { projectId, recordId, site, status: s, limit: limit + 1 })));
      const mask = await identifierMask(db, projectId, undefined);
      const merged = pages.flat().sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || a.recordId.localeCompare(b.recordId));
      const shown = merged.slice(0, limit).map((query) => present(mask.query(query)));
      return { statuses, returned: shown.length, has_more: merged.length > limit, queries: shown };
    },
  };
}

function present(query: DataQuery & { masked: boolean }) {
  return {
    id: query.id,
    record_id: query.recordId,
    event: query.eventName || null,
    site: query.site,
    field: query.field,
    rule: query.ruleId,
    severity: query.severity,
    message: query.message,
    status: query.status,
    // Fixed in the data since (a later run no longer finds it), or kept from the site until a review decides.
    no_longer_fires: query.noLongerFires !== null,
    held_for_review: query.heldByTaskRunId !== null,
    value: query.masked ? null : query.value,
    ...(query.masked ? { value_withheld: WITHHELD } : {}),
    created_at: query.createdAt.toISOString(),
    updated_at: query.updatedAt.toISOString(),
  };
}
