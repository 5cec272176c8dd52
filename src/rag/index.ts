// The RAG area's public surface: chunk, embed, ingest and search documents over pgvector.
export type { Embedder, OpenAiEmbedderConfig } from '../core/embeddings.js';
export { createOpenAiEmbedder } from '../core/embeddings.js';
export { createLocalEmbedder, LOCAL_EMBEDDER_MODEL } from './local-embedder.js';
export { createEmbedder } from './create-embedder.js';
export { chunkText, type ChunkOptions, type TextChunk } from './chunk-text.js';
export { extractText, SUPPORTED_EXTENSIONS } from './extract-text.js';
export { createRagStore } from './rag-store.js';
export { loadGraphLibrary } from './memory-index/usearch-graph.js';
export type { DocumentInfo, IndexScopeOptions, IngestInput, IngestResult, RagStore, ReferenceChunk, RetrieveQuery, ScopeIndexStatus, SearchScope } from './types.js';
export { MIN_INDEXED_SCOPE_CHUNKS } from './search-plan.js';
export { projectScope, isProjectScope } from './project-scope.js';
