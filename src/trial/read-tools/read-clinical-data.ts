import { z } from 'zod';
import type { Db } from '../../core/db/connect.js';
import { ClinAgentError } from '../../core/errors.js';
import type { ToolDefinition } from '../../core/tools/registry.js';
import { baseFieldName, identifierMask } from '../identifiers.js';
import { loadRecordContext, type RecordContext } from '../sop/record-context.js';
import { getDictionary, getEvents } from '../store/dictionary.js';
import { recordNotFound, someOf } from './tool-errors.js';

const Args = z.object({
  record_id: z.string().trim().min(1, 'name the record (subject id), e.g. "S001"').describe('the record (subject) id, e.g. "S001"'),
  events: z.array(z.string().min(1)).max(100).optional().describe('only these events (REDCap unique event names, e.g. "v2_arm_1"); all when absent'),
  fields: z.array(z.string().min(1)).max(200).optional().describe('only these fields (dictionary names, e.g. "sbp"); all when absent'),
});
type Args = z.infer<typeof Args>;

type Data = Record<string, unknown>;

const IDENTIFIER_REASON = 'identifier field';

/**
 * A record as a model may see it: the model view of the record context (no identifier field) filtered once
 * more by the identifier mask, which also knows checkbox columns (`contact___2` of an identifier `contact`).
 * Identifier fields are named under `withheld`, never valued, so the model can tell the user why it cannot answer.
 */
export function readClinicalDataTool(db: Db, projectId: string): ToolDefinition<Args> {
  return {
    name: 'read_clinical_data',
    description:
      "Read one subject's CRF data in this project: site, and per event its field values and record version. Identifier fields (names, phone, address, birth date) are never returned; they are listed under `withheld`.",
    schema: Args,
    async run({ record_id: recordId, events, fields }) {
      const context = await loadContext(db, projectId, recordId);
      const [mask, dictionary, schedule] = await Promise.all([identifierMask(db, projectId, undefined), getDictionary(db, projectId), getEvents(db, projectId)]);
      const rows = eventRows(context);

      if (events?.length) {
        const unknown = events.filter((event) => !rows.some((row) => row.event === event));
        if (unknown.length) {
          const has = context.events.length ? `it has data at ${someOf(context.events)}` : 'this project has no events (one row per record)';
          throw new ClinAgentError('VALIDATION_FAILED', `record ${JSON.stringify(recordId)} has no data at event(s) ${unknown.join(', ')}; ${has}. Ask again with those event names or without "events".`, { unknown });
        }
      }

      const present = new Set(rows.flatMap((row) => Object.keys(row.data)));
      const known = new Set([...dictionary.map((field) => field.fieldName), ...present]);
      const withheld = new Set<string>();
      let wanted: ((key: string) => boolean) | undefined;
      if (fields?.length) {
        // An identifier column (`contact___1`) is not in the model view at all: it is withheld, not unknown.
        const unknown = fields.filter((field) => !known.has(field) && !mask.isIdentifier(field));
        if (unknown.length) {
          const visible = dictionary.map((field) => field.fieldName).filter((name) => !mask.isIdentifier(name));
          throw new ClinAgentError('VALIDATION_FAILED', `unknown field(s) ${unknown.join(', ')}; known fields include ${someOf(visible)}. Use the dictionary's field names.`, { unknown });
        }
        for (const field of fields) if (mask.isIdentifier(field)) withheld.add(field);
        const asked = new Set(fields.filter((field) => !mask.isIdentifier(field)));
        // A checkbox is asked for by its dictionary name and stored as one column per choice (`symptoms___2`).
        wanted = (key) => asked.has(key) || asked.has(baseFieldName(key));
      } else {
        // Named even when blank, as the console's mask does: which ones are filled is not for the model either.
        for (const field of dictionary) if (field.identifier) withheld.add(field.fieldName);
      }

      const labels = new Map(schedule.map((event) => [event.eventName, event.label]));
      const selected = rows.filter((row) => !events?.length || events.includes(row.event));
      return {
        record_id: recordId,
        site: context.site,
        events: selected.map((row) => ({
          event: row.event,
          label: labels.get(row.event) ?? null,
          version: context.versions[row.event] ?? null,
          fields: Object.fromEntries(Object.entries(row.data).filter(([key]) => !mask.isIdentifier(key) && (!wanted || wanted(key)))),
        })),
        withheld: [...withheld].map((field) => ({ field, reason: IDENTIFIER_REASON })),
      };
    },
  };
}

async function loadContext(db: Db, projectId: string, recordId: string): Promise<RecordContext> {
  try {
    return await loadRecordContext(db, projectId, recordId);
  } catch (error) {
    if (ClinAgentError.isInstance(error) && error.code === 'NOT_FOUND') throw recordNotFound(recordId);
    throw error;
  }
}

/** The model view per event; a project without events is one row named ''. */
function eventRows(context: RecordContext): Array<{ event: string; data: Data }> {
  const view = context.modelView;
  if (context.events.length === 0) {
    const { record_id: _recordId, site: _site, ...data } = view;
    return [{ event: '', data }];
  }
  const byEvent = view.events as Record<string, Data>;
  return context.events.map((event) => ({ event, data: byEvent[event] ?? {} }));
}
