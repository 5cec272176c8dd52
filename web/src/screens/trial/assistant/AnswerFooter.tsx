import { useT } from '../../../i18n/use-t';
import { routes } from '../../../router';
import { useSessionStore } from '../../../stores/session';
import { FeedbackControl } from './FeedbackControl';

interface AnswerFooterProps {
  projectId: string;
  conversationId?: string;
  turnSeq?: number;
  traceId?: string | null;
}

/** Under each answer: the thumbs, and for admins a link to the run's full trace (others cannot read it). */
export function AnswerFooter({ projectId, conversationId, turnSeq, traceId }: AnswerFooterProps) {
  const t = useT();
  const isAdmin = useSessionStore((state) => state.user?.role === 'admin');
  const canRate = Boolean(conversationId) && turnSeq !== undefined && turnSeq >= 1;
  if (!canRate && !(isAdmin && traceId)) return null;
  return (
    <footer className="answer-footer">
      {canRate ? <FeedbackControl projectId={projectId} conversationId={conversationId!} turnSeq={turnSeq!} /> : <span />}
      {isAdmin && traceId ? (
        <a className="small" href={routes.trace(traceId)} data-testid="assistant-trace-link" title={t('assistant.traceTitle')}>
          {t('assistant.trace')} <code>{traceId.slice(0, 8)}</code>
        </a>
      ) : null}
    </footer>
  );
}
