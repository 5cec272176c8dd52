export { patientExclusions } from './patient-exclusions.js';
export { checkedTurn, excludedDrugStream, patientWordsOf } from './check-turn.js';
export { redactIdentifierText } from './identifiers.js';
export { identifierFreeHistory, identifierFreeModel } from './identifier-free-model.js';
