import type { SampleSizeResponse } from '../../../api';
import { useT } from '../../../i18n/use-t';

/** The calculator's answer: subjects per group after dropout, the total, events (time to event) and its basis. */
export function CalculatorResult({ result }: { result: SampleSizeResponse }) {
  const t = useT();
  const perGroup = result.perGroup[1] === 0 ? String(result.perGroup[0]) : result.perGroup.join(' / ');
  return (
    <section className="panel calculator-result" aria-labelledby="calculator-result-title" data-testid="calculator-result">
      <h3 id="calculator-result-title">{t('calculator.result')}</h3>
      <dl>
        <dt>{t('calculator.perGroup')}</dt>
        <dd data-testid="calculator-per-group">{perGroup}</dd>
        <dt>{t('calculator.total')}</dt>
        <dd data-testid="calculator-total">{result.total}</dd>
        {result.events !== undefined ? (
          <>
            <dt>{t('calculator.events')}</dt>
            <dd>{result.events}</dd>
          </>
        ) : null}
        <dt>{t('calculator.method')}</dt>
        <dd>{result.method}</dd>
        <dt>{t('calculator.assumptions')}</dt>
        <dd>
          <ul className="small">
            {result.assumptions.map((assumption) => (
              <li key={assumption}>{assumption}</li>
            ))}
          </ul>
        </dd>
      </dl>
    </section>
  );
}
