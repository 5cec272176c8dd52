export { searchMedication, matchConditions, exclusionReasons } from './search-medication.js';
export { readConstraints, readPatientWords, wordTerms, type PatientConstraints, type PatientWords } from './contraindications.js';
export { loadFormulary, parseFormulary, shippedFormulary, defaultFormularyPath, type Formulary, type ClassRule, type FormularyDrug, type Suitability } from './formulary.js';
export { consultMedicationTool, searchMedicationTool, type SearchMedicationArgs } from './tool.js';
