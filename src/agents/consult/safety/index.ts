export { patientExclusions, type ExcludedDrug, type PatientExclusions } from './patient-exclusions.js';
export { splitSentences, withoutExcludedDrugs, withoutExcludedOptions, type CheckedText, type RemovedDrug } from './without-excluded-drugs.js';
export { checkedTurn, excludedDrugStream, patientWordsOf } from './check-turn.js';
