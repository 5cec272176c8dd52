import { useFormat } from '../../i18n/use-format';
import { useT } from '../../i18n/use-t';
import { dossierLabel, yesNo } from './labels';
import { dossierSections, readableText } from './readable';

/** The dossier's JSON as a readable record: its sections as headed values and lists, its disclaimer last. */
export function DossierView({ dossier }: { dossier: Record<string, unknown> }) {
  const t = useT();
  const format = useFormat();
  const words = yesNo(t);
  const createdAt = typeof dossier.created_at === 'string' ? dossier.created_at : null;
  return (
    <article className="dossier-view" aria-label={t('consult.dossier.viewLabel')} data-testid="dossier-view">
      <header>
        <strong>{readableText(dossier.title) || t('consult.dossier.title')}</strong>
        {createdAt ? <span className="muted small"> · {t('consult.dossier.madeAt', { time: format.dateTime(createdAt) })}</span> : null}
      </header>
      {dossierSections(dossier, words).map((section) => (
        <section key={section.key} className="dossier-section" data-section={section.key}>
          <h4>{dossierLabel(t, section.key)}</h4>
          {section.text !== undefined ? <p className={section.text ? undefined : 'muted'}>{section.text || t('consult.dossier.blank')}</p> : null}
          {section.rows ? (
            <dl className="consult-values">
              {section.rows.map((row) => (
                <div key={row.key} className="consult-row">
                  <dt>{dossierLabel(t, row.key)}</dt>
                  <dd className={row.text ? undefined : 'muted'}>{row.text || t('consult.dossier.blank')}</dd>
                </div>
              ))}
            </dl>
          ) : null}
          {section.items ? (
            section.items.length > 0 ? (
              <ul className="dossier-items">
                {section.items.map((item, index) => (
                  <li key={index}>{item}</li>
                ))}
              </ul>
            ) : (
              <p className="muted">{t('consult.dossier.blank')}</p>
            )
          ) : null}
        </section>
      ))}
      {typeof dossier.disclaimer === 'string' ? <p className="muted small dossier-disclaimer">{dossier.disclaimer}</p> : null}
    </article>
  );
}
