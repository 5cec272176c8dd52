import { useState } from 'react';
import { useT } from '../../../i18n/use-t';
import { keyLabel } from '../labels';
import { ContextEditor } from './ContextEditor';
import { displayRows, editableEntries, type Arm } from './context-fields';

interface ContextSectionProps {
  field: string;
  fieldName: string;
  data: Record<string, unknown>;
  isCurrent: boolean;
  /** The protocol's PICO, whose intervention and comparison name the sample size's arms. */
  pico?: Record<string, unknown>;
}

/** One stage's part of the protocol as labelled values, with an editor for the keys a person can type. */
export function ContextSection({ field, fieldName, data, isCurrent, pico }: ContextSectionProps) {
  const t = useT();
  const armLabel = (arm: Arm) => t(`protocol.arm.${arm}`);
  const [isEditing, setEditing] = useState(false);
  const headingId = `context-${field}-title`;
  return (
    <section className={`context-section${isCurrent ? ' context-section-current' : ''}`} aria-labelledby={headingId} data-testid={`context-${field}`}>
      <div className="context-head">
        <h4 id={headingId}>{fieldName}</h4>
        {!isEditing && editableEntries(field).length > 0 ? (
          <button type="button" className="link-button small" onClick={() => setEditing(true)} aria-label={t('protocol.context.editLabel', { field: fieldName })}>
            {t('protocol.context.edit')}
          </button>
        ) : null}
      </div>
      {isEditing ? (
        <ContextEditor field={field} fieldName={fieldName} data={data} onClose={() => setEditing(false)} />
      ) : (
        <dl className="context-values">
          {displayRows(field, data, { pico, armLabel }).map((row) => (
            <div key={row.path} className="context-row" data-path={row.path}>
              <dt>{keyLabel(t, row.path)}</dt>
              {row.items && row.items.length > 1 ? (
                <dd>
                  <ul className="context-list">
                    {row.items.map((item, index) => (
                      <li key={index}>{item}</li>
                    ))}
                  </ul>
                </dd>
              ) : (
                <dd className={row.text ? undefined : 'muted'}>{row.text || t('protocol.context.blank')}</dd>
              )}
            </div>
          ))}
        </dl>
      )}
    </section>
  );
}
