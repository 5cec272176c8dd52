// The consult's medical knowledge base: the shipped articles, their ingest, the search_medical_knowledge tool.
export { ingestConsultKnowledge } from './ingest.js';
export { createMedicalKnowledgeTool } from './tool.js';
