import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
import { useApiDocsStore } from './stores/api-docs';
import { useAssistantChatStore } from './stores/assistant-chat';
import { useAssistantFeedbackStore } from './stores/assistant-feedback';
import { useChatStore } from './stores/chat';
import { useConsultStore } from './stores/consult';
import { useConversationsStore } from './stores/conversations';
import { useHotMemoryStore } from './stores/hot-memory';
import { useMemoryReportsStore } from './stores/memory-reports';
import { useProfileStore } from './stores/profile';
import { useProtocolAgentStore } from './stores/protocol-agent';
import { useSampleSizeCalculatorStore } from './stores/sample-size-calculator';
import { useQcRunsStore } from './stores/qc-runs';
import { useReviewQueueStore } from './stores/review-queue';
import { useScenariosStore } from './stores/scenarios';
import { useAgentsStore } from './stores/agents';
import { useSessionStore } from './stores/session';
import { useTaskRunStore } from './stores/task-run';
import { useTracesStore } from './stores/traces';
import { useTrialCatalogStore } from './stores/trial-catalog';
import { useTrialQueriesStore } from './stores/trial-queries';
import { useTrialRecordStore } from './stores/trial-record';
import './styles.css';

// Conversations and loaded data belong to the signed-in user; drop them when the session ends so the next
// person at a shared workstation does not see them.
useSessionStore.subscribe((state, previous) => {
  if (previous.status === 'signedIn' && state.status !== 'signedIn') {
    useChatStore.getState().reset();
    useConversationsStore.getState().reset();
    useScenariosStore.getState().reset();
    useAgentsStore.getState().reset();
    useTracesStore.getState().reset();
    useApiDocsStore.getState().reset();
    useTrialCatalogStore.getState().reset();
    useQcRunsStore.getState().reset();
    useTrialQueriesStore.getState().reset();
    useReviewQueueStore.getState().reset();
    useTrialRecordStore.getState().reset();
    useTaskRunStore.getState().reset();
    useAssistantChatStore.getState().reset();
    useAssistantFeedbackStore.getState().reset();
    useHotMemoryStore.getState().reset();
    useMemoryReportsStore.getState().reset();
    useProfileStore.getState().reset();
    useProtocolAgentStore.getState().reset();
    useSampleSizeCalculatorStore.getState().reset();
    useConsultStore.getState().reset();
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
