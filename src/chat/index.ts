export { createTrialAssistant, type TrialAssistant } from './trial-assistant.js';
export { type IntentType } from './routing/route-intent.js';
export { ROUTE_INTENT_DEFINITION } from './routing/route-intent-definition.js';
