import { useT } from '../i18n/use-t';
import type { WaitingFor } from '../stores/chat-stream';

/** "Waiting for you": a run stopped for the user (the `waiting` event), with what it asks of them. */
export function WaitingPrompt({ waiting }: { waiting: WaitingFor }) {
  const t = useT();
  return (
    <section className="waiting-prompt" role="status" data-testid="waiting-prompt" data-awaiting={waiting.awaiting}>
      <header className="answer-meta">
        <span className="badge badge-warn">{t('stream.waiting')}</span>
        <span className="muted small">{t(`stream.waiting.${waiting.awaiting}`)}</span>
      </header>
      <p className="waiting-prompt-text" data-testid="waiting-prompt-text">
        {waiting.prompt}
      </p>
    </section>
  );
}
