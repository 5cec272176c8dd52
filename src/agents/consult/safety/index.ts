export { patientExclusions, type ExcludedDrug, type PatientExclusions } from './patient-exclusions.js';
export { splitSentences, withoutExcludedDrugs, withoutExcludedOptions, type CheckedText, type RemovedDrug } from './without-excluded-drugs.js';
export { checkedTurn, excludedDrugStream, patientWordsOf } from './check-turn.js';
export { isIdentifierKey, REDACTED, redactIdentifierText, withIdentifierTextReplaced, withoutIdentifierKeys, withoutIdentifiers, withoutIdentifiersInModelText } from './identifiers.js';
export { identifierFreeHistory, identifierFreeModel } from './identifier-free-model.js';
