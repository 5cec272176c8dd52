import { useT } from '../../i18n/use-t';
import { routes, type Route } from '../../router';
import { useLocaleStore } from '../../stores/locale';
import { useSessionStore } from '../../stores/session';

export function LanguageToggle() {
  const t = useT();
  const locale = useLocaleStore((state) => state.locale);
  const setLocale = useLocaleStore((state) => state.setLocale);
  return (
    <button
      type="button"
      className="button button-ghost"
      data-testid="language-toggle"
      aria-label={t('header.switchToLabel')}
      title={t('header.language')}
      onClick={() => setLocale(locale === 'zh' ? 'en' : 'zh')}
    >
      {t('header.switchTo')}
    </button>
  );
}

export function Header({ route }: { route: Route }) {
  const t = useT();
  const user = useSessionStore((state) => state.user);
  const signOut = useSessionStore((state) => state.signOut);
  const isScenarios = route.name === 'scenarios' || route.name === 'chat';

  return (
    <header className="app-header">
      <a className="brand" href={routes.scenarios()}>
        <span className="brand-mark" aria-hidden="true">+</span>
        <span className="brand-name">{t('app.name')}</span>
      </a>
      <nav className="main-nav">
        <a href={routes.scenarios()} className={isScenarios ? 'active' : undefined} data-testid="nav-scenarios">
          {t('nav.scenarios')}
        </a>
        <a href={routes.trial()} className={route.name === 'trial' ? 'active' : undefined} data-testid="nav-trial">
          {t('nav.trial')}
        </a>
        <a href={routes.protocols()} className={route.name === 'protocol' || route.name === 'protocolCalculator' ? 'active' : undefined} data-testid="nav-protocol">
          {t('nav.protocol')}
        </a>
        <a href={routes.consults()} className={route.name === 'consult' ? 'active' : undefined} data-testid="nav-consult">
          {t('nav.consult')}
        </a>
        <a href={routes.api()} className={route.name === 'api' ? 'active' : undefined} data-testid="nav-api">
          {t('nav.api')}
        </a>
        {user?.role === 'admin' ? (
          <a href={routes.users()} className={route.name === 'users' ? 'active' : undefined} data-testid="nav-users">
            {t('nav.users')}
          </a>
        ) : null}
      </nav>
      <div className="header-right">
        {user ? (
          <span className="user-chip" data-testid="current-user">
            <span className="user-name">{user.name}</span>
            <span className="user-role">{user.role}</span>
          </span>
        ) : null}
        <a href={routes.tokens()} className={`button button-ghost${route.name === 'tokens' ? ' active' : ''}`} data-testid="nav-tokens">
          {t('nav.tokens')}
        </a>
        <LanguageToggle />
        <button type="button" className="button button-ghost" data-testid="sign-out" onClick={signOut}>
          {t('header.signOut')}
        </button>
      </div>
    </header>
  );
}
