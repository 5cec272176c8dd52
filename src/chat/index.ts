export { createTrialAssistant, type ChatAnswer, type ChatOptions, type ChatPart, type TrialAssistant, type TrialAssistantDeps } from './trial-assistant.js';
