import type { ChatAnswer } from '../../../api';
import { ErrorAlert } from '../../../components/ErrorAlert';
import { Spinner } from '../../../components/Spinner';
import { WaitingPrompt } from '../../../components/WaitingPrompt';
import { useT } from '../../../i18n/use-t';
import { routes } from '../../../router';
import type { AssistantTurn } from '../../../stores/assistant-chat';
import { answerBadges, streamBadges } from '../../../stores/assistant-stream';
import { runningTools, shownText, type StreamingAnswer } from '../../../stores/chat-stream';
import { AnswerFooter } from './AnswerFooter';
import { IntentBadges } from './IntentBadges';

/** Says why keyword rules classified the message: "the model was unavailable" only when it was. */
function RoutedByRules({ fallback }: { fallback: string | null | undefined }) {
  const t = useT();
  return (
    <span className="muted small" data-testid="routed-by-rules" data-fallback={fallback ?? ''}>
      {t(fallback === 'answer_unusable' ? 'assistant.routedByRulesUnusable' : 'assistant.routedByRules')}
    </span>
  );
}

/** The finished answer: intents, the text, links to QC runs it started, feedback and (admins) the trace. */
function AssistantAnswer({ projectId, answer }: { projectId: string; answer: ChatAnswer }) {
  const t = useT();
  const qcRuns = answer.parts.filter((part) => part.qcRunId);
  return (
    <article className="answer assistant-answer" data-testid="assistant-answer" data-conversation-id={answer.conversationId} data-turn-seq={answer.turnSeq}>
      <header className="answer-meta">
        <IntentBadges badges={answerBadges(answer)} />
        {answer.routedBy === 'rules' ? <RoutedByRules fallback={answer.routingFallback} /> : null}
      </header>
      {answer.answer ? (
        <div className="answer-text" data-testid="assistant-answer-text">
          {answer.answer}
        </div>
      ) : (
        <p className="muted">{t('assistant.noAnswer')}</p>
      )}
      {qcRuns.length > 0 ? (
        <p className="small">
          <a href={routes.trialRuns(projectId)} data-testid="assistant-qc-run-link">
            {t('assistant.followRun')} →
          </a>
        </p>
      ) : null}
      <AnswerFooter projectId={projectId} conversationId={answer.conversationId} turnSeq={answer.turnSeq} traceId={answer.traceId} />
    </article>
  );
}

/** The answer while it arrives: intents once routed, the tools at work (names only), then the text so far. */
function AssistantStreaming({ projectId, stream }: { projectId: string; stream: StreamingAnswer }) {
  const t = useT();
  const text = shownText(stream);
  const busy = runningTools(stream);
  // Tools run inside a part; a tool event without one is not the assistant's to show.
  const tools = stream.tools.filter((tool) => tool.part !== undefined);
  return (
    <article className="answer answer-streaming assistant-answer" data-testid="assistant-streaming" aria-busy={!stream.isStopped}>
      <header className="answer-meta">
        <IntentBadges badges={streamBadges(stream)} />
        {stream.plan?.routedBy === 'rules' ? <RoutedByRules fallback={stream.plan.routingFallback} /> : null}
        {stream.isStopped ? (
          <>
            <span className="badge badge-warn" data-testid="stream-stopped">
              {t('stream.stopped')}
            </span>
            <span className="muted small">{t('stream.stoppedHint')}</span>
          </>
        ) : null}
      </header>
      {tools.length > 0 ? (
        <div className="assistant-tools" data-testid="assistant-tools">
          {busy.length > 0 && !stream.isStopped ? <span className="muted small">{t('assistant.usingTools', { tools: busy.join(', ') })}</span> : null}
          <span className="assistant-tool-chips">
            {tools.map((tool, index) => (
              <code key={index} className={`tool-chip tool-chip-${tool.status}`} data-testid="assistant-tool" data-status={tool.status} title={t(`stream.tool.${tool.status}`)}>
                {tool.name}
              </code>
            ))}
          </span>
        </div>
      ) : null}
      {text ? (
        <div className="answer-text" data-testid="assistant-streaming-text">
          {text}
        </div>
      ) : null}
      {stream.waiting ? <WaitingPrompt waiting={stream.waiting} /> : null}
      {!stream.isStopped && !stream.waiting && !text && busy.length === 0 ? <Spinner label={t('assistant.working')} /> : null}
      {stream.isStopped ? <AnswerFooter projectId={projectId} traceId={stream.traceId} /> : null}
    </article>
  );
}

export function AssistantTurnView({ projectId, turn }: { projectId: string; turn: AssistantTurn }) {
  const t = useT();
  return (
    <div className="turn" data-testid="assistant-turn">
      <div className="message message-user" data-testid="user-message">
        <div className="message-author">{t('chat.you')}</div>
        <div className="message-text">{turn.input}</div>
      </div>
      <div className="message message-agent">
        <div className="message-author">{t('assistant.name')}</div>
        {turn.result ? (
          <>
            <AssistantAnswer projectId={projectId} answer={turn.result} />
            {/* A run that stopped for the user still asks once its result has replaced the stream. */}
            {turn.streaming.waiting ? <WaitingPrompt waiting={turn.streaming.waiting} /> : null}
          </>
        ) : turn.requestError === undefined ? (
          <AssistantStreaming projectId={projectId} stream={turn.streaming} />
        ) : null}
        {turn.requestError !== undefined ? <ErrorAlert error={turn.requestError} title={t('answer.requestFailed')} testId="assistant-error" /> : null}
      </div>
    </div>
  );
}
