export { buildDossier, type DossierInput } from './build-dossier.js';
export { createDossierStore, type DossierStore } from './dossier-store.js';
export { dossierDocx, dossierJson, dossierMarkdown } from './export.js';
export { createDossierTool, type DossierSnapshot } from './tool.js';
export { recordToolOutputs, recordedFindings } from './consult-record.js';
