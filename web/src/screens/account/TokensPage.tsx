import { useT } from '../../i18n/use-t';
import { useSessionStore } from '../../stores/session';
import { useTokensStore } from '../../stores/tokens';
import { TokenTable } from './TokenTable';

/** The signed-in user's own tokens: see where they are used and revoke one that is lost or leaked. */
export function TokensPage() {
  const t = useT();
  const user = useSessionStore((state) => state.user);
  const load = useTokensStore((state) => state.load);
  if (!user) return null;
  return (
    <main className="page">
      <div className="page-head">
        <div>
          <h1>{t('tokens.title')}</h1>
          <p className="muted">{t('tokens.intro')}</p>
        </div>
        <div className="page-actions">
          <button type="button" className="button button-small" onClick={() => void load(user.id)}>
            {t('common.refresh')}
          </button>
        </div>
      </div>
      <section className="panel section">
        <TokenTable userId={user.id} />
      </section>
    </main>
  );
}
