// The consult's medical knowledge base: the shipped articles, their ingest, the search_medical_knowledge tool.
export { KNOWLEDGE_BASES, knowledgeFolder, loadKnowledgeArticles, resolveSpecialty, type KnowledgeArticle, type KnowledgeSection, type Specialty } from './articles.js';
export { ingestConsultKnowledge, type KnowledgeIngestResult } from './ingest.js';
export { createMedicalKnowledgeTool, type KnowledgePassage } from './tool.js';
