import { useEffect, useState, type FormEvent } from 'react';
import { ErrorAlert } from '../../components/ErrorAlert';
import { useT } from '../../i18n/use-t';
import { routes } from '../../router';
import { useSampleSizeCalculatorStore } from '../../stores/sample-size-calculator';
import { CalculatorFields } from './calculator/CalculatorFields';
import { callbackResult, cardOf, formFromParams, requestFromForm } from './calculator/calculator-form';
import { CalculatorResult } from './calculator/CalculatorResult';
import './protocol.css';

/**
 * The sample-size calculator, its inputs from the link (an action card's deep link fills them from the protocol).
 * Opened from a card, "Use in protocol" records the result through the card's callback and returns to the protocol.
 */
export function CalculatorPage({ params }: { params: Record<string, string> }) {
  const t = useT();
  const [form, setForm] = useState(() => formFromParams(params));
  const [problem, setProblem] = useState<string | null>(null);
  const calculator = useSampleSizeCalculatorStore();
  const { calculate, apply, reset } = useSampleSizeCalculatorStore.getState();
  const card = cardOf(params);

  // A result belongs to the page it was computed on; another visit starts blank.
  useEffect(() => reset, [reset]);

  function submit(event: FormEvent) {
    event.preventDefault();
    const { request, invalid } = requestFromForm(form);
    if (invalid.length > 0) return setProblem(t('calculator.notANumber', { fields: invalid.join(', ') }));
    setProblem(null);
    void calculate(request);
  }

  async function recordInProtocol() {
    if (!card || !calculator.request || !calculator.result) return;
    if (await apply(card.conversationId, card.cardId, callbackResult(calculator.request, calculator.result))) {
      window.location.hash = routes.protocol(card.conversationId);
    }
  }

  return (
    <section className="page calculator-page" aria-labelledby="calculator-title">
      <div className="section-head">
        <div>
          <h2 id="calculator-title">{t('calculator.title')}</h2>
          <p className="muted small">{card ? t('calculator.fromCard') : t('calculator.intro')}</p>
        </div>
        {card ? (
          <a className="back-link" href={routes.protocol(card.conversationId)}>
            ← {t('calculator.back')}
          </a>
        ) : null}
      </div>
      <form className="panel calculator-form" aria-label={t('calculator.formLabel')} onSubmit={submit}>
        <CalculatorFields form={form} onChange={setForm} />
        <button type="submit" className="button button-primary" disabled={calculator.isCalculating}>
          {calculator.isCalculating ? t('calculator.calculating') : t('calculator.calculate')}
        </button>
      </form>
      {problem ? (
        <p className="field-error" role="alert">
          {problem}
        </p>
      ) : null}
      {calculator.error ? <ErrorAlert error={calculator.error} title={t('calculator.failed')} /> : null}
      {calculator.result ? <CalculatorResult result={calculator.result} /> : null}
      {calculator.result && card ? (
        <div className="page-actions">
          <button type="button" className="button button-success" onClick={() => void recordInProtocol()} disabled={calculator.isApplying}>
            {calculator.isApplying ? t('calculator.applying') : t('calculator.use')}
          </button>
        </div>
      ) : null}
      {calculator.applyError ? <ErrorAlert error={calculator.applyError} title={t('calculator.applyFailed')} /> : null}
    </section>
  );
}
