export { createTrialAssistant, type ChatAnswer, type ChatOptions, type ChatPart, type TrialAssistant, type TrialAssistantDeps } from './trial-assistant.js';
export { routeIntent, routeByRules, detectLanguage, INTENT_TYPES, type Intent, type IntentType, type RoutedMessage, type RoutingFallback } from './routing/route-intent.js';
export { ROUTE_INTENT_DEFINITION } from './routing/route-intent-definition.js';
