import { useMemo, useState } from 'react';
import type { DataQuery, RecordCrf } from '../../../api';
import { useT } from '../../../i18n/use-t';
import { CrfFormTable } from './CrfFormTable';
import { isRowShown, queriesByCell } from './crf-cells';
import './crf.css';

/**
 * The record as a case report form: one table per form, fields in dictionary order, visits as columns. Fields
 * never filled in any visit of this record are hidden until asked for, so a 300-field dictionary shows what the
 * site entered.
 */
export function CrfView({ crf, queries }: { crf: RecordCrf; queries: DataQuery[] }) {
  const t = useT();
  const [isShowingEmpty, setShowingEmpty] = useState(false);
  const cells = useMemo(() => queriesByCell(crf, queries), [crf, queries]);
  const forms = crf.forms
    .map((form) => ({ form, fields: isShowingEmpty ? form.fields : form.fields.filter((field) => isRowShown(crf, field.name, cells)) }))
    .filter(({ fields }) => fields.length > 0);
  const hiddenCount = crf.forms.reduce((sum, form) => sum + form.fields.length, 0) - forms.reduce((sum, { fields }) => sum + fields.length, 0);

  return (
    <div className="crf" data-testid="crf">
      <label className="crf-toolbar small">
        <input type="checkbox" data-testid="crf-show-empty" checked={isShowingEmpty} onChange={(event) => setShowingEmpty(event.target.checked)} />{' '}
        {t('crf.showEmpty')}
        {!isShowingEmpty && hiddenCount > 0 ? <span className="muted"> {t('crf.hiddenCount', { count: hiddenCount })}</span> : null}
      </label>
      {forms.length === 0 ? <p className="muted small">{t('crf.noValues')}</p> : null}
      {forms.map(({ form, fields }) => (
        <CrfFormTable key={form.name} form={form} crf={crf} fields={fields} cells={cells} />
      ))}
    </div>
  );
}
