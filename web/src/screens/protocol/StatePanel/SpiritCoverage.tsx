import type { SpiritCoverage as Coverage } from '../../../api';
import { useT } from '../../../i18n/use-t';

/** How much of SPIRIT 2025 the protocol answers so far, and the items still open. */
export function SpiritCoverage({ spirit }: { spirit: Coverage }) {
  const t = useT();
  return (
    <section className="protocol-section" aria-labelledby="spirit-title" data-testid="spirit-coverage">
      <h3 id="spirit-title">{t('protocol.spirit.title')}</h3>
      <p>
        <meter min={0} max={spirit.total || 1} value={spirit.covered.length} aria-label={t('protocol.spirit.title')} />{' '}
        <span data-testid="spirit-count">{t('protocol.spirit.covered', { covered: spirit.covered.length, total: spirit.total })}</span>
      </p>
      {spirit.open.length > 0 ? (
        <details>
          <summary>
            {t('protocol.spirit.open')} ({spirit.open.length})
          </summary>
          <ul className="spirit-open small">
            {spirit.open.map((item) => (
              <li key={item.id}>
                <strong>{item.id}</strong> {item.title} <span className="muted">· {item.section}</span>
              </li>
            ))}
          </ul>
        </details>
      ) : (
        <p className="muted small">{t('protocol.spirit.allCovered')}</p>
      )}
    </section>
  );
}
