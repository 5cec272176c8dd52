import { ErrorAlert } from '../../components/ErrorAlert';
import { Spinner } from '../../components/Spinner';
import { WaitingPrompt } from '../../components/WaitingPrompt';
import { useT } from '../../i18n/use-t';
import type { Turn } from '../../stores/chat';
import { AnswerView } from './AnswerView';
import { StreamingAnswer } from './StreamingAnswer';

export function TurnView({ turn }: { turn: Turn }) {
  const t = useT();
  const isPending = !turn.result && turn.requestError === undefined && !turn.streaming.isStopped && !turn.streaming.waiting;
  return (
    <div className="turn">
      <div className="message message-user" data-testid="user-message">
        <div className="message-author">
          {t('chat.you')}
          {turn.documentIds ? (
            <span className="muted small"> · {t('answer.scope', { count: turn.documentIds.length })}</span>
          ) : null}
        </div>
        <div className="message-text">{turn.input}</div>
      </div>
      <div className="message message-agent">
        <div className="message-author">{t('chat.agent')}</div>
        {turn.result ? <AnswerView result={turn.result} /> : turn.requestError === undefined || turn.streaming.traceId ? <StreamingAnswer answer={turn.streaming} /> : null}
        {/* A run that stopped for the user still asks once its result has replaced the stream. */}
        {turn.result && turn.streaming.waiting ? <WaitingPrompt waiting={turn.streaming.waiting} /> : null}
        {turn.requestError !== undefined ? (
          <ErrorAlert error={turn.requestError} title={t('answer.requestFailed')} testId="run-error" />
        ) : null}
        {isPending ? <Spinner label={t('chat.running')} /> : null}
      </div>
    </div>
  );
}
