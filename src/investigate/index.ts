export { investigate, type InvestigateInput, type InvestigateResult } from './investigate.js';
export { ENDING_MESSAGES } from './endings.js';
export { INVESTIGATE_DEFINITION } from './definition.js';
