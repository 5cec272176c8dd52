import { ErrorAlert } from '../../components/ErrorAlert';
import { Spinner } from '../../components/Spinner';
import { useT } from '../../i18n/use-t';
import type { ConversationTurn } from '../../api/conversations-api';

interface EarlierTurnsProps {
  turns: ConversationTurn[];
  isOpening: boolean;
  openError?: unknown;
}

/**
 * The turns of a reopened conversation as the server logged them: questions, answers, and the tools the agent
 * called with their results (collapsed). This session's answers follow with their full detail.
 */
export function EarlierTurns({ turns, isOpening, openError }: EarlierTurnsProps) {
  const t = useT();
  if (isOpening) return <Spinner label={t('conversations.opening')} />;
  if (openError) return <ErrorAlert error={openError} />;
  if (turns.length === 0) return null;
  return (
    <section className="earlier-turns" data-testid="earlier-turns" aria-label={t('conversations.earlier')}>
      <h2 className="visually-hidden">{t('conversations.earlier')}</h2>
      {turns.map((turn) => {
        if (turn.role === 'user') {
          return (
            <div key={turn.seq} className="message message-user" data-testid="earlier-user-message">
              <div className="message-author">{t('chat.you')}</div>
              <div className="message-text">{turn.content}</div>
            </div>
          );
        }
        if (turn.role === 'tool') {
          return (
            <details key={turn.seq} className="collapsible earlier-tool" data-testid="earlier-tool-result">
              <summary>{t('conversations.toolResult', { name: turn.toolName ?? turn.toolCallId ?? '' })}</summary>
              <pre className="json">{turn.content}</pre>
            </details>
          );
        }
        return (
          <div key={turn.seq} className="message message-agent" data-testid="earlier-agent-message">
            <div className="message-author">{t('chat.agent')}</div>
            {turn.content ? <div className="answer-text earlier-answer">{turn.content}</div> : null}
            {(turn.toolCalls ?? []).map((call) => (
              <div key={call.id} className="muted small earlier-tool-call">
                {t('conversations.toolCall', { name: call.name })} <code>{call.arguments}</code>
              </div>
            ))}
          </div>
        );
      })}
    </section>
  );
}
