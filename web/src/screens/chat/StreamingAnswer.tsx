import { WaitingPrompt } from '../../components/WaitingPrompt';
import { useT } from '../../i18n/use-t';
import { previewText, shownText, type StreamingAnswer as StreamingAnswerState } from '../../stores/chat-stream';

/** A turn's answer while it arrives: tool calls as they start and end, then the text so far. */
export function StreamingAnswer({ answer }: { answer: StreamingAnswerState }) {
  const t = useT();
  const text = previewText(shownText(answer));
  return (
    <article className="answer answer-streaming" data-testid="streaming-answer" aria-busy={!answer.isStopped}>
      {answer.isStopped ? (
        <header className="answer-meta">
          <span className="badge badge-warn" data-testid="stream-stopped">
            {t('stream.stopped')}
          </span>
          <span className="muted">{t('stream.stoppedHint')}</span>
          {answer.traceId ? (
            <code className="muted small" data-testid="stream-trace-id">
              {answer.traceId}
            </code>
          ) : null}
        </header>
      ) : null}
      {answer.tools.length > 0 ? (
        <ol className="tool-call-list">
          {answer.tools.map((tool) => (
            <li className="tool-call" data-testid="streaming-tool" data-status={tool.status} key={tool.callId}>
              <div className="tool-call-head">
                <code className="tool-name">{tool.name}</code>
                <span className={`badge ${tool.status === 'running' ? 'badge-info' : tool.status === 'ok' ? 'badge-ok' : 'badge-fail'}`}>
                  {t(`stream.tool.${tool.status}`)}
                </span>
              </div>
              {tool.error ? <div className="tool-error">{tool.error}</div> : null}
            </li>
          ))}
        </ol>
      ) : null}
      {text ? (
        <div className="answer-text" data-testid="streaming-text">
          {text}
        </div>
      ) : null}
      {answer.waiting ? <WaitingPrompt waiting={answer.waiting} /> : null}
    </article>
  );
}
