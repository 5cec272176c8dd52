import { useState } from 'react';
import type { AgentResult } from '../../api';
import { useT } from '../../i18n/use-t';
import { fileLink } from './file-link';
import { ReferenceList } from './ReferenceList';
import { StructuredOutputView } from './StructuredOutputView';
import { ToolCallList } from './ToolCallList';
import { TracePanel } from './TracePanel';

export function AnswerView({ result }: { result: AgentResult }) {
  const t = useT();
  const [isTraceOpen, setTraceOpen] = useState(false);
  const isFailed = result.status === 'failed';
  // On a successful run `error` holds the structured-output parse problem; the answer is still usable.
  const parseProblem = isFailed ? '' : result.error;

  return (
    <article className={`answer ${isFailed ? 'answer-failed' : ''}`} data-testid="answer">
      <header className="answer-meta">
        <span className={`badge ${isFailed ? 'badge-fail' : result.status === 'cancelled' ? 'badge-warn' : 'badge-ok'}`} data-testid="answer-status">
          {isFailed ? t('answer.status.failed') : result.status === 'cancelled' ? t('answer.status.cancelled') : t('answer.status.success')}
        </span>
        <span>
          <span className="muted">{t('answer.model')}:</span> {result.modelName || '—'}
        </span>
        <span>
          <span className="muted">{t('answer.latency')}:</span> {t('answer.latencyValue', { ms: result.latencyMs })}
        </span>
        {result.traceId ? (
          <button
            type="button"
            className="link-button"
            data-testid="trace-toggle"
            aria-expanded={isTraceOpen}
            onClick={() => setTraceOpen(!isTraceOpen)}
            title={result.traceId}
          >
            {t('answer.trace')} <code>{result.traceId.slice(0, 12)}</code> · {isTraceOpen ? t('trace.hide') : t('trace.show')}
          </button>
        ) : null}
      </header>

      {isFailed ? (
        <div className="alert alert-error" role="alert" data-testid="run-error">
          <strong className="alert-title">{t('answer.runFailed')}</strong>
          <span className="alert-text">{result.error}</span>
        </div>
      ) : null}

      {result.answer ? (
        <div className="answer-text" data-testid="answer-text">
          {result.answer}
        </div>
      ) : !isFailed ? (
        <p className="muted">{t('answer.noAnswer')}</p>
      ) : null}

      {parseProblem ? (
        <div className="alert alert-warning small" role="status" data-testid="parse-warning">
          {t('answer.parseError', { message: parseProblem })}
        </div>
      ) : null}

      {isTraceOpen && result.traceId ? <TracePanel traceId={result.traceId} /> : null}

      <section className="answer-section">
        <h3>{t('answer.references', { count: result.references.length })}</h3>
        <ReferenceList references={result.references} />
      </section>

      <section className="answer-section">
        <h3>{t('answer.toolCalls', { count: result.toolCalls.length })}</h3>
        <ToolCallList toolCalls={result.toolCalls} />
      </section>

      {result.files.length > 0 ? (
        // Files a Dify app's tools made (charts, reports): links to where the app serves them.
        <section className="answer-section" data-testid="answer-files">
          <h3>{t('answer.files', { count: result.files.length })}</h3>
          <ul className="file-list">
            {result.files.map((file) => {
              const link = fileLink(file);
              return (
                <li key={file.id || file.url}>
                  {link ? (
                    <a href={link.href} target="_blank" rel="noreferrer noopener">
                      {link.label}
                    </a>
                  ) : (
                    file.id
                  )}{' '}
                  <span className="muted small">{file.type}</span>
                </li>
              );
            })}
          </ul>
        </section>
      ) : null}

      <section className="answer-section">
        <h3>{t('answer.structured')}</h3>
        <StructuredOutputView output={result.structuredOutput} />
      </section>

      {result.rawOutput ? (
        <details className="collapsible">
          <summary>{t('answer.raw')}</summary>
          <pre className="json">{result.rawOutput}</pre>
        </details>
      ) : null}
    </article>
  );
}
