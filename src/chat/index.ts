export { createTrialAssistant, type ChatAnswer, type ChatEvent, type ChatOptions, type ChatPart, type TrialAssistant, type TrialAssistantDeps } from './trial-assistant.js';
