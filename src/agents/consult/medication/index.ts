export { exclusionReasons } from './search-medication.js';
export { readConstraints, readPatientWords, wordTerms, type PatientConstraints } from './contraindications.js';
export { shippedFormulary, type Formulary, type ClassRule } from './formulary.js';
export { consultMedicationTool, searchMedicationTool } from './tool.js';
