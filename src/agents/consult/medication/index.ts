export { searchMedication, matchConditions } from './search-medication.js';
export { readConstraints, type PatientConstraints } from './contraindications.js';
export { loadFormulary, parseFormulary, shippedFormulary, defaultFormularyPath, type Formulary, type FormularyDrug, type Suitability } from './formulary.js';
export { searchMedicationTool, type SearchMedicationArgs } from './tool.js';
