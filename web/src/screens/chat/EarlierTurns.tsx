import type { ReactNode } from 'react';
import { ErrorAlert } from '../../components/ErrorAlert';
import { Spinner } from '../../components/Spinner';
import { useT } from '../../i18n/use-t';
import type { ConversationTurn } from '../../api/conversations-api';

interface EarlierTurnsProps {
  turns: ConversationTurn[];
  isOpening: boolean;
  openError?: unknown;
  /** The trial assistant: only questions and answers are shown, not the tools it called on the way. */
  hideToolTurns?: boolean;
  /** Who answered, "Agent" by default. */
  agentLabel?: string;
  /** Shown under each answer (the assistant's feedback buttons and trace link). */
  answerFooter?: (turn: ConversationTurn) => ReactNode;
}

/**
 * The turns of a reopened conversation as the server logged them: questions, answers, and the tools the agent
 * called with their results (collapsed). This session's answers follow with their full detail.
 */
export function EarlierTurns({ turns: allTurns, isOpening, openError, hideToolTurns, agentLabel, answerFooter }: EarlierTurnsProps) {
  const t = useT();
  if (isOpening) return <Spinner label={t('conversations.opening')} />;
  if (openError) return <ErrorAlert error={openError} />;
  const turns = hideToolTurns ? allTurns.filter((turn) => turn.role === 'user' || (turn.role === 'assistant' && turn.content.trim() !== '' && !turn.toolCalls?.length)) : allTurns;
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
            <div className="message-author">{agentLabel ?? t('chat.agent')}</div>
            {turn.content ? <div className="answer-text earlier-answer">{turn.content}</div> : null}
            {(hideToolTurns ? [] : (turn.toolCalls ?? [])).map((call) => (
              <div key={call.id} className="muted small earlier-tool-call">
                {t('conversations.toolCall', { name: call.name })} <code>{call.arguments}</code>
              </div>
            ))}
            {answerFooter?.(turn)}
          </div>
        );
      })}
    </section>
  );
}
