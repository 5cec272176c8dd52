export { buildDossier, DOSSIER_DISCLAIMER, type DossierContent, type DossierInput } from './build-dossier.js';
export { createDossierStore, type DossierStore, type StoredDossier } from './dossier-store.js';
export { dossierDocx, dossierJson, dossierMarkdown } from './export.js';
export { createDossierTool, type DossierSnapshot, type DossierToolDeps, type DossierToolResult } from './tool.js';
export { recordToolOutputs, recordedFindings } from './consult-record.js';
