import { useEffect } from 'react';
import { hashForPathLink, useRoute } from './router';
import { TokensPage } from './screens/account/TokensPage';
import { ApiDocsScreen } from './screens/api-docs/ApiDocsScreen';
import { ChatScreen } from './screens/chat/ChatScreen';
import { TraceScreen } from './screens/chat/TraceScreen';
import { Header } from './screens/layout/Header';
import { LlmWarning } from './screens/layout/LlmWarning';
import { ConsultPage } from './screens/consult/ConsultPage';
import { CalculatorPage } from './screens/protocol/CalculatorPage';
import { ProtocolPage } from './screens/protocol/ProtocolPage';
import { ServerFooter } from './screens/layout/ServerFooter';
import { ScenarioListScreen } from './screens/scenarios/ScenarioListScreen';
import { SignInScreen } from './screens/sign-in/SignInScreen';
import { TrialScreen } from './screens/trial/TrialScreen';
import { UsersPage } from './screens/users/UsersPage';
import { useHealthStore } from './stores/health';
import { useLocaleStore } from './stores/locale';
import { useSessionStore } from './stores/session';

// A console page typed as a site path (an action card's deep link pasted into the URL bar) reaches the console
// through the server's SPA fallback; the hash router reads it once it is moved behind '#'.
const pathLink = hashForPathLink(window.location);
if (pathLink) window.history.replaceState(null, '', `/${pathLink}`);

export function App() {
  const status = useSessionStore((state) => state.status);
  const locale = useLocaleStore((state) => state.locale);
  const route = useRoute();
  const loadHealth = useHealthStore((state) => state.load);

  useEffect(() => {
    document.documentElement.lang = locale === 'zh' ? 'zh-CN' : 'en';
  }, [locale]);

  // Health needs no token; reload it after sign-in so a server restarted with an LLM configured clears the warning.
  useEffect(() => {
    void loadHealth();
  }, [loadHealth, status]);

  if (status !== 'signedIn') return <SignInScreen />;

  return (
    <div className="app">
      <Header route={route} />
      <LlmWarning />
      {route.name === 'chat' ? (
        <ChatScreen key={route.scenarioId} scenarioId={route.scenarioId} />
      ) : route.name === 'api' ? (
        <ApiDocsScreen />
      ) : route.name === 'tokens' ? (
        <TokensPage />
      ) : route.name === 'users' ? (
        <UsersPage />
      ) : route.name === 'trace' ? (
        <TraceScreen key={route.traceId} traceId={route.traceId} />
      ) : route.name === 'trial' ? (
        <TrialScreen projectId={route.projectId} page={route.page} />
      ) : route.name === 'protocol' ? (
        <ProtocolPage conversationId={route.conversationId} />
      ) : route.name === 'consult' ? (
        <ConsultPage sessionId={route.sessionId} />
      ) : route.name === 'protocolCalculator' ? (
        <CalculatorPage key={JSON.stringify(route.params)} params={route.params} />
      ) : (
        <ScenarioListScreen />
      )}
      <ServerFooter />
    </div>
  );
}
