import { useState, type FormEvent, type KeyboardEvent } from 'react';
import { Spinner } from '../../components/Spinner';
import { useT } from '../../i18n/use-t';

interface ChatComposerProps {
  isRunning: boolean;
  /** False when the document scope is empty, so a run could not retrieve anything. */
  canSend: boolean;
  onSend(input: string): void;
  /** Stops the running answer; the Stop button shows while one runs. */
  onStop?(): void;
  /** The scenario chat's hint by default. */
  placeholder?: string;
}

export function ChatComposer({ isRunning, canSend, onSend, onStop, placeholder }: ChatComposerProps) {
  const t = useT();
  const [input, setInput] = useState('');
  const isDisabled = isRunning || !canSend || input.trim() === '';

  function submit(event?: FormEvent) {
    event?.preventDefault();
    if (isDisabled) return;
    onSend(input);
    setInput('');
  }

  // Enter inserts a newline because questions about protocols are often several lines; Ctrl/Cmd+Enter sends.
  function onKeyDown(event: KeyboardEvent<HTMLTextAreaElement>) {
    if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) submit();
  }

  return (
    <form className="composer" onSubmit={submit}>
      <label htmlFor="chat-input" className="visually-hidden">
        {t('chat.inputLabel')}
      </label>
      <textarea
        id="chat-input"
        data-testid="chat-input"
        rows={3}
        placeholder={placeholder ?? t('chat.inputPlaceholder')}
        value={input}
        onChange={(event) => setInput(event.target.value)}
        onKeyDown={onKeyDown}
      />
      <div className="composer-actions">
        {isRunning ? (
          <span className="composer-running">
            <Spinner label={t('chat.running')} />
            {onStop ? (
              <button type="button" className="button button-danger" data-testid="chat-stop" onClick={onStop}>
                {t('chat.stop')}
              </button>
            ) : null}
          </span>
        ) : (
          <span />
        )}
        <button type="submit" className="button button-primary" data-testid="chat-send" disabled={isDisabled}>
          {t('chat.send')}
        </button>
      </div>
    </form>
  );
}
