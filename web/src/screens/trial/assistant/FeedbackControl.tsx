import { useState, type FormEvent } from 'react';
import { ErrorAlert } from '../../../components/ErrorAlert';
import { useT } from '../../../i18n/use-t';
import { feedbackKey, useAssistantFeedbackStore } from '../../../stores/assistant-feedback';

interface FeedbackControlProps {
  projectId: string;
  conversationId: string;
  /** The assistant turn that holds the answer. */
  turnSeq: number;
}

/** Thumbs up or down on one answer, with an optional comment; the daily distillation reads it into the project memory. */
export function FeedbackControl({ projectId, conversationId, turnSeq }: FeedbackControlProps) {
  const t = useT();
  const entry = useAssistantFeedbackStore((state) => state.entries[feedbackKey(conversationId, turnSeq)]);
  const send = useAssistantFeedbackStore((state) => state.send);
  const [chosen, setChosen] = useState<'up' | 'down' | null>(null);
  const [comment, setComment] = useState('');
  const sentRating = entry?.status === 'saved' ? entry.feedback.rating : entry?.rating;
  const isSaving = entry?.status === 'saving';

  function submit(event: FormEvent) {
    event.preventDefault();
    if (!chosen || isSaving) return;
    const rating = chosen;
    void send(projectId, { conversationId, turnSeq, rating, comment }).then(() => {
      if (useAssistantFeedbackStore.getState().entries[feedbackKey(conversationId, turnSeq)]?.status === 'saved') {
        setChosen(null);
        setComment('');
      }
    });
  }

  const thumb = (rating: 'up' | 'down') => {
    const isActive = (chosen ?? sentRating) === rating;
    return (
      <button
        type="button"
        className={`button button-small feedback-thumb ${isActive ? 'feedback-thumb-active' : ''}`}
        data-testid={`feedback-${rating}`}
        aria-pressed={isActive}
        title={t(rating === 'up' ? 'feedback.up' : 'feedback.down')}
        disabled={isSaving}
        onClick={() => setChosen(chosen === rating ? null : rating)}
      >
        <span aria-hidden="true">{rating === 'up' ? '👍' : '👎'}</span> {t(rating === 'up' ? 'feedback.up' : 'feedback.down')}
      </button>
    );
  };

  return (
    <div className="feedback" data-testid="feedback">
      <div className="feedback-row">
        <span className="muted small">{t('feedback.label')}</span>
        {thumb('up')}
        {thumb('down')}
        {entry?.status === 'saved' && !chosen ? (
          <span className="muted small" data-testid="feedback-saved" role="status">
            {entry.feedback.rating === 'down' ? t('feedback.savedDown') : t('feedback.saved')}
          </span>
        ) : null}
      </div>
      {chosen ? (
        <form className="inline-form feedback-form" onSubmit={submit}>
          <label className="inline-form-label" htmlFor={`feedback-${conversationId}-${turnSeq}`}>
            {t('feedback.commentLabel')}
          </label>
          <textarea
            id={`feedback-${conversationId}-${turnSeq}`}
            data-testid="feedback-comment"
            rows={2}
            maxLength={2000}
            value={comment}
            onChange={(event) => setComment(event.target.value)}
          />
          <div className="inline-form-actions">
            <button type="submit" className="button button-small button-primary" data-testid="feedback-send" disabled={isSaving}>
              {isSaving ? t('common.saving') : t('feedback.send')}
            </button>
            <button type="button" className="button button-small" onClick={() => setChosen(null)} disabled={isSaving}>
              {t('common.cancel')}
            </button>
          </div>
        </form>
      ) : null}
      {entry?.status === 'error' ? <ErrorAlert error={entry.error} title={t('feedback.failed')} testId="feedback-error" /> : null}
    </div>
  );
}
