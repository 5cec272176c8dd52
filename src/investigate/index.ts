export { investigate, type InvestigateInput, type InvestigateResult } from './investigate.js';
export { READ_ONLY_TOOLS, type ReadOnlyTool } from './read-only-tools.js';
export { ENDING_MESSAGES, endingMessage, type InvestigateEnding } from './endings.js';
export { finalAnswerOnly } from './final-answer-only.js';
export type { QuestionContext } from './prompt.js';
export { INVESTIGATE_DEFINITION, type QuestionInput } from './definition.js';
