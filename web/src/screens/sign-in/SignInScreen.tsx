import { useState, type FormEvent } from 'react';
import { ErrorAlert } from '../../components/ErrorAlert';
import { Spinner } from '../../components/Spinner';
import { errorText } from '../../i18n/error-text';
import { useT } from '../../i18n/use-t';
import { useSessionStore, type SessionNotice } from '../../stores/session';
import { LanguageToggle } from '../layout/Header';

function NoticeView({ notice }: { notice: SessionNotice }) {
  const t = useT();
  switch (notice.type) {
    case 'signedOut':
      return (
        <div className="alert alert-info" role="status" data-testid="sign-in-notice">
          {t('signIn.signedOut')}
        </div>
      );
    case 'sessionEnded':
      return (
        <div className="alert alert-error" role="alert" data-testid="sign-in-notice">
          {t('signIn.sessionEnded', { message: errorText(notice.error, t) })}
        </div>
      );
    case 'signInFailed':
      return <ErrorAlert error={notice.error} testId="sign-in-notice" />;
  }
}

export function SignInScreen() {
  const t = useT();
  const { status, notice, isSubmitting, startupError, signInWithToken, start } = useSessionStore();
  const [token, setToken] = useState('');

  function submit(event: FormEvent) {
    event.preventDefault();
    void signInWithToken(token).then(() => setToken(''));
  }

  return (
    <div className="sign-in-page">
      <div className="sign-in-top">
        <LanguageToggle />
      </div>
      <main className="sign-in-card">
        <div className="brand brand-large">
          <span className="brand-mark" aria-hidden="true">+</span>
          <span className="brand-name">{t('app.name')}</span>
        </div>
        <p className="muted">{t('app.tagline')}</p>
        <h1>{t('signIn.title')}</h1>

        {status === 'checking' ? (
          <Spinner label={t('signIn.checking')} />
        ) : status === 'unreachable' ? (
          <ErrorAlert
            error={startupError}
            action={
              <button type="button" className="button" onClick={() => void start()}>
                {t('common.retry')}
              </button>
            }
          />
        ) : (
          <>
            {notice ? <NoticeView notice={notice} /> : null}
            <p>{t('signIn.intro')}</p>
            <form className="sign-in-form" onSubmit={submit}>
              <label htmlFor="token-input">{t('signIn.tokenLabel')}</label>
              <input
                id="token-input"
                type="password"
                autoComplete="off"
                spellCheck={false}
                data-testid="token-input"
                placeholder={t('signIn.tokenPlaceholder')}
                value={token}
                onChange={(event) => setToken(event.target.value)}
              />
              <button
                type="submit"
                className="button button-primary"
                data-testid="sign-in-submit"
                disabled={isSubmitting || token.trim() === ''}
              >
                {isSubmitting ? t('signIn.checking') : t('signIn.submit')}
              </button>
            </form>
            <p className="muted small">{t('signIn.hint')}</p>
          </>
        )}
      </main>
    </div>
  );
}
