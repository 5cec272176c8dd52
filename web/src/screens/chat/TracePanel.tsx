import { useEffect } from 'react';
import type { TraceSpan } from '../../api';
import { ErrorAlert } from '../../components/ErrorAlert';
import { CollapsibleJson } from '../../components/JsonView';
import { Spinner } from '../../components/Spinner';
import { useT } from '../../i18n/use-t';
import { useTracesStore } from '../../stores/traces';
import { enumLabel } from '../trial/labels';
import { outlineTrace, type TraceStep } from './trace-steps';

function formatNumber(value: number | null | undefined): string {
  return value === null || value === undefined ? '—' : String(value);
}

/** Model calls, tool calls and retrievals with their timing, tokens, errors and (collapsed) payloads. */
function SpanTable({ spans }: { spans: TraceSpan[] }) {
  const t = useT();
  return (
    <div className="table-scroll">
      <table className="table">
        <thead>
          <tr>
            <th>{t('trace.kind')}</th>
            <th>{t('trace.name')}</th>
            <th>{t('trace.status')}</th>
            <th className="num">{t('trace.duration')}</th>
            <th className="num">{t('trace.tokens')}</th>
            <th>{t('trace.error')}</th>
          </tr>
        </thead>
        <tbody>
          {spans.map((span, index) => (
            <tr key={span.id || index} className={span.error ? 'row-error' : undefined} data-testid="trace-span" data-kind={span.kind}>
              <td>{span.kind}</td>
              <td>
                {span.name}
                {span.input !== undefined && span.input !== null ? <CollapsibleJson label={t('trace.input')} value={span.input} /> : null}
                {span.output !== undefined && span.output !== null ? <CollapsibleJson label={t('trace.output')} value={span.output} /> : null}
              </td>
              <td>{span.status}</td>
              <td className="num">{span.durationMs == null ? '—' : t('answer.latencyValue', { ms: span.durationMs })}</td>
              <td className="num">
                {formatNumber(span.promptTokens)} / {formatNumber(span.completionTokens)}
              </td>
              <td className="error-cell">{span.error ?? ''}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** One round of the agent loop: its thought, the tools it called with their arguments, what came back, then its calls. */
function StepView({ step }: { step: TraceStep }) {
  const t = useT();
  const { span } = step;
  return (
    <li className={`trace-step ${span.status === 'failed' ? 'trace-step-failed' : ''}`} data-testid="trace-step">
      <div className="trace-step-head">
        <strong>{span.name}</strong>
        {step.outcome ? <span className="tag">{enumLabel(t, 'trace.outcome', step.outcome)}</span> : null}
        <span className="tag">{span.status}</span>
        <span className="muted small">
          {t('answer.latencyValue', { ms: span.durationMs })} · {formatNumber(step.promptTokens)} / {formatNumber(step.completionTokens)}
        </span>
      </div>
      {span.error ? <div className="tool-error">{span.error}</div> : null}
      {step.thought ? (
        <div className="trace-field">
          <span className="trace-label">{t('trace.thought')}</span>
          <div className="trace-thought" data-testid="trace-thought">
            {step.thought}
          </div>
        </div>
      ) : null}
      {step.reasoning ? (
        <details className="collapsible">
          <summary>{t('trace.reasoning')}</summary>
          <pre className="json">{step.reasoning}</pre>
        </details>
      ) : null}
      {step.actions.length > 0 ? (
        <div className="trace-field">
          <span className="trace-label">{t('trace.actions')}</span>
          <ul className="trace-list">
            {step.actions.map((action, index) => (
              <li key={index} data-testid="trace-action">
                <code className="tool-name">{action.tool}</code> <code className="trace-args">{action.arguments}</code>
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      {step.observations.length > 0 ? (
        <div className="trace-field">
          <span className="trace-label">{t('trace.observations')}</span>
          <ul className="trace-list">
            {step.observations.map((observation, index) => (
              <li key={index} data-testid="trace-observation">
                <pre className="json trace-observation">{observation}</pre>
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      {step.problems.length > 0 ? (
        <div className="trace-field">
          <span className="trace-label">{t('trace.problems')}</span>
          <ul className="trace-list">
            {step.problems.map((problem, index) => (
              <li key={index} className="tool-error">
                {problem}
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      {step.children.length > 0 ? (
        <details className="collapsible">
          <summary>{t('trace.calls')} ({step.children.length})</summary>
          <SpanTable spans={step.children} />
        </details>
      ) : null}
    </li>
  );
}

/**
 * A run's trace: the agent loop's rounds readably (thought, actions, observations) with the model and tool calls
 * inside each, then any other spans (retrieval, a router call), so a user can see what happened and where time
 * and tokens went.
 */
export function TracePanel({ traceId }: { traceId: string }) {
  const t = useT();
  const entry = useTracesStore((state) => state.entries[traceId]);
  const load = useTracesStore((state) => state.load);

  useEffect(() => {
    void load(traceId);
  }, [load, traceId]);

  if (!entry || entry.status === 'loading') return <Spinner label={t('trace.loading')} />;
  if (entry.status === 'error') return <ErrorAlert error={entry.error} testId="trace-error" />;

  const { trace } = entry;
  const outline = outlineTrace(trace.spans);
  return (
    <section className="trace-panel" data-testid="trace-panel">
      <h4>
        {t('trace.title', { id: trace.id })} · <span className="muted">{trace.name}</span> <span className="tag">{trace.status}</span>
      </h4>
      {trace.error ? <div className="tool-error">{trace.error}</div> : null}
      {trace.spans.length === 0 ? <p className="muted small">{t('trace.noSpans')}</p> : null}
      {outline.steps.length > 0 ? (
        <>
          <h5 className="trace-heading">{t('trace.steps', { count: outline.steps.length })}</h5>
          <ol className="trace-steps">
            {outline.steps.map((step, index) => (
              <StepView key={step.span.id || index} step={step} />
            ))}
          </ol>
        </>
      ) : null}
      {outline.others.length > 0 ? (
        <>
          {outline.steps.length > 0 ? <h5 className="trace-heading">{t('trace.otherSpans')}</h5> : null}
          <SpanTable spans={outline.others} />
        </>
      ) : null}
    </section>
  );
}
