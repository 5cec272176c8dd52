import { useT } from '../../i18n/use-t';
import { contextLabel, yesNo } from './labels';
import { contextRows, readableText } from './readable';

/** What the consult has recorded about the problem and the patient; blanks show what it does not know yet. */
export function MedicalContextView({ context }: { context: Record<string, unknown> }) {
  const t = useT();
  const words = yesNo(t);
  return (
    <section className="consult-section" aria-labelledby="consult-context-title" data-testid="medical-context">
      <h3 id="consult-context-title">{t('consult.context.title')}</h3>
      <dl className="consult-values">
        {contextRows(context).map((row) => {
          const text = readableText(row.value, words);
          return (
            <div key={row.path} className="consult-row" data-path={row.path}>
              <dt>{contextLabel(t, row.key)}</dt>
              <dd className={text ? undefined : 'muted'}>{text || t('consult.context.blank')}</dd>
            </div>
          );
        })}
      </dl>
    </section>
  );
}
