import { useT } from '../../i18n/use-t';
import { useSessionStore } from '../../stores/session';
import { useTokensStore } from '../../stores/tokens';
import { ProfileSection } from './ProfileSection';
import { TokenTable } from './TokenTable';

/** The signed-in user's account: how the trial assistant answers them, and their tokens (see where they are used, revoke one that is lost or leaked). */
export function TokensPage() {
  const t = useT();
  const user = useSessionStore((state) => state.user);
  const load = useTokensStore((state) => state.load);
  if (!user) return null;
  return (
    <main className="page">
      <div className="page-head">
        <div>
          <h1>{t('account.title')}</h1>
          <p className="muted">{t('account.intro')}</p>
        </div>
      </div>
      <ProfileSection />
      <section className="panel section" aria-labelledby="tokens-title">
        <div className="section-head">
          <div>
            <h2 id="tokens-title">{t('tokens.title')}</h2>
            <p className="muted small">{t('tokens.intro')}</p>
          </div>
          <button type="button" className="button button-small" onClick={() => void load(user.id)}>
            {t('common.refresh')}
          </button>
        </div>
        <TokenTable userId={user.id} />
      </section>
    </main>
  );
}
