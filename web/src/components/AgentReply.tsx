import type { ReactNode } from 'react';
import { useT } from '../i18n/use-t';
import { Spinner } from './Spinner';

/**
 * An agent's reply in a chat turn (the Protocol Agent, the consult): its author, the text as it is written or as it
 * ended, a "stopped" badge, a spinner until the first words, and whatever the agent adds below (notes, cards).
 */
export function AgentReply(props: { author: string; text: string; isWriting: boolean; isStopped?: boolean; testId: string; workingLabel: string; children?: ReactNode }) {
  const t = useT();
  return (
    <div className="message message-agent">
      <div className="message-author">{props.author}</div>
      <article className={`answer${props.isWriting ? ' answer-streaming' : ''}`} data-testid={props.testId} aria-busy={props.isWriting}>
        {props.isStopped ? (
          <header className="answer-meta">
            <span className="badge badge-warn">{t('stream.stopped')}</span>
          </header>
        ) : null}
        {props.text ? <div className="answer-text">{props.text}</div> : null}
        {props.isWriting && !props.text ? <Spinner label={props.workingLabel} /> : null}
        {props.children}
      </article>
    </div>
  );
}
