import type { DataQuery, RecordEvent } from '../../api';
import { formatValue } from '../../i18n/format';
import { useFormat } from '../../i18n/use-format';
import { useT } from '../../i18n/use-t';
import { siteLabel } from './labels';

/**
 * Field names in the order they first appear, record id first. The store keeps data as jsonb, which orders
 * keys by length, not by the data dictionary; the record view carries no dictionary to sort by.
 */
function fieldOrder(events: RecordEvent[]): string[] {
  const seen = new Set<string>(['record_id']);
  for (const event of events) for (const field of Object.keys(event.data)) seen.add(field);
  if (!events.some((event) => 'record_id' in event.data)) seen.delete('record_id');
  return [...seen];
}

const hasValue = (event: RecordEvent, field: string) => formatValue(event.data[field]) !== '';

/**
 * The subject's data as a CRF grid: one row per field, one column per event. A value with a query that is
 * still open is marked, so a monitor sees at a glance which values the site has been asked about.
 */
export function RecordEventsTable({ events, queries }: { events: RecordEvent[]; queries: DataQuery[] }) {
  const t = useT();
  const format = useFormat();
  const fields = fieldOrder(events);
  const flagged = new Map<string, string[]>();
  for (const query of queries) {
    if (query.status === 'closed' || query.status === 'cancelled') continue;
    // Rules name visit fields with their event (`v1_arm_1.age`); the grid's rows are the plain field names.
    const field = query.eventName && query.field.startsWith(`${query.eventName}.`) ? query.field.slice(query.eventName.length + 1) : query.field;
    // A query raised on the whole record (no event) marks the field wherever the record has it.
    const inEvents = query.eventName ? events.filter((e) => e.eventName === query.eventName) : events.filter((e) => hasValue(e, field));
    const keys = inEvents.map((e) => `${e.eventName}\u0000${field}`);
    for (const key of keys) flagged.set(key, [...(flagged.get(key) ?? []), query.message]);
  }

  return (
    <div className="table-scroll">
      <table className="table record-table" data-testid="record-events">
        <thead>
          <tr>
            <th className="record-field-col">{t('record.field')}</th>
            {events.map((event) => (
              <th key={event.eventName} data-testid="record-event">
                <div>{event.eventName || '—'}</div>
                <div className="muted small record-event-meta">
                  {siteLabel(t, event.site)} · {t('record.version', { version: event.version })} · {format.dateTime(event.updatedAt)}
                </div>
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {fields.map((field) => (
            <tr key={field}>
              <th scope="row" className="record-field-col">
                <code>{field}</code>
              </th>
              {events.map((event) => {
                const messages = flagged.get(`${event.eventName}\u0000${field}`);
                const value = formatValue(event.data[field]);
                // An identifier this user may not see: shown as a mask, never as blank ("—" means no value).
                const isMasked = event.maskedFields?.includes(field) ?? false;
                return (
                  <td
                    key={event.eventName}
                    className={messages ? 'cell-flagged' : undefined}
                    title={messages ? `${t('record.hasQuery')}: ${messages.join('; ')}` : undefined}
                    data-testid={messages ? 'record-flagged-value' : undefined}
                  >
                    {isMasked ? (
                      <span className="muted" title={t('record.masked')} aria-label={t('record.masked')} data-testid="record-masked-value">
                        ••••
                      </span>
                    ) : value === '' ? (
                      <span className="muted">—</span>
                    ) : (
                      value
                    )}
                  </td>
                );
              })}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
