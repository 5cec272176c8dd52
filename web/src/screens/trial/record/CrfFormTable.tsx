import type { CrfEvent, CrfForm, DataQuery, RecordCrf } from '../../../api';
import { useT } from '../../../i18n/use-t';
import { CrfCell } from './CrfCell';
import { cellKey } from './crf-cells';

const NO_QUERIES: DataQuery[] = [];

/** A visit column's head: the event's label, its unique name, and for visits with data their site and version. */
function EventHead({ event }: { event: CrfEvent }) {
  const t = useT();
  return (
    <th scope="col" data-testid="crf-event" data-event={event.eventName}>
      <div data-testid="crf-event-label">{event.label || (event.eventName ? event.eventName : t('crf.classicColumn'))}</div>
      {event.eventName ? <div className="muted small mono">{event.eventName}</div> : null}
      <div className="muted small record-event-meta">
        {event.armName ? `${event.armName} · ` : ''}
        {event.hasData ? t('record.version', { version: event.version ?? 1 }) : t('crf.notEntered')}
      </div>
    </th>
  );
}

/** One form of the CRF: its fields as rows (label, variable name), the record's visits as columns. */
export function CrfFormTable({ form, crf, fields, cells }: { form: CrfForm; crf: RecordCrf; fields: CrfForm['fields']; cells: Map<string, DataQuery[]> }) {
  const t = useT();
  const title = form.name ? form.label : t('crf.otherFields');
  return (
    <section className="crf-form" data-testid="crf-form" data-form={form.name}>
      <h4 className="crf-form-title">
        {title}
        {form.name ? <code className="muted small"> {form.name}</code> : null}
      </h4>
      <div className="table-scroll">
        <table className="table record-table crf-table">
          <thead>
            <tr>
              <th className="record-field-col">{t('record.field')}</th>
              {crf.events.map((event) => (
                <EventHead key={event.eventName} event={event} />
              ))}
            </tr>
          </thead>
          <tbody>
            {fields.map((field) => (
              <tr key={field.name} data-testid="crf-row" data-field={field.name}>
                <th scope="row" className="record-field-col">
                  <div className="crf-label">{field.label || field.name}</div>
                  <code className="muted small crf-name">{field.name}</code>
                </th>
                {crf.events.map((event) => (
                  <CrfCell
                    key={event.eventName}
                    field={field}
                    eventName={event.eventName}
                    value={crf.values[event.eventName]?.[field.name]}
                    isMasked={crf.maskedFields.includes(field.name) && event.hasData}
                    queries={cells.get(cellKey(event.eventName, field.name)) ?? NO_QUERIES}
                  />
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
