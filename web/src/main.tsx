import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
import { useApiDocsStore } from './stores/api-docs';
import { useChatStore } from './stores/chat';
import { useScenariosStore } from './stores/scenarios';
import { useSessionStore } from './stores/session';
import { useTracesStore } from './stores/traces';
import './styles.css';

// Conversations and loaded data belong to the signed-in user; drop them when the session ends so the next
// person at a shared workstation does not see them.
useSessionStore.subscribe((state, previous) => {
  if (previous.status === 'signedIn' && state.status !== 'signedIn') {
    useChatStore.getState().reset();
    useScenariosStore.getState().reset();
    useTracesStore.getState().reset();
    useApiDocsStore.getState().reset();
  }
});

const container = document.getElementById('root');
if (!container) throw new Error('index.html must contain <div id="root">');

createRoot(container).render(
  <StrictMode>
    <App />
  </StrictMode>,
);

void useSessionStore.getState().start();
