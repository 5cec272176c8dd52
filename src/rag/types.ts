/** One retrieved chunk with everything needed to cite it: which scenario, document, file and position. */
export interface ReferenceChunk {
  documentId: string;
  scenarioId: string;
  collection: string;
  sourceFile: string;
  /** `${documentId}#${chunkIndex}` */
  chunkId: string;
  chunkIndex: number;
  content: string;
  /** Cosine similarity, 1 - cosine distance: 1 is identical, 0 unrelated. */
  score: number;
}

export interface DocumentInfo {
  documentId: string;
  scenarioId: string;
  collection: string;
  sourceFile: string;
  chunkCount: number;
  /** sha256 of the ingested text, hex. */
  contentHash: string;
  /** ISO 8601. */
  updatedAt: string;
}

export interface IngestInput {
  /** Absent: a new random id ('doc_...'). Present and known: the document is replaced. */
  documentId?: string;
  scenarioId: string;
  sourceFile: string;
  text: string;
  collection: string;
  /** Who ingests it, for the audit trail; default 'system' (the shipped documents at start-up). */
  actor?: string;
}

export interface IngestResult {
  documentId: string;
  chunks: number;
  /** True when the text matched the stored content hash, so nothing was re-embedded or rewritten. */
  unchanged: boolean;
}

export interface RetrieveQuery {
  scenarioId: string;
  query: string;
  collection: string;
  /** 1 to 50; default 5. */
  topK?: number;
  /** Only these documents; an empty array means none, so nothing is returned. */
  documentIds?: string[];
}

export interface SearchScope {
  scenarioId: string;
  collection: string;
}

/**
 * Where a scope's index stands, read from the database (so any process sees the ingest job's progress):
 * - none: no index (the scope is below the size that needs one, or the ingest job has not reached it yet);
 * - extending: the index exists and the ingest job is adding the chunks it does not hold yet;
 * - ready: every chunk of the scope is in the index.
 * Searches are complete in every state: chunks outside the index are compared exactly.
 */
export interface ScopeIndexStatus extends SearchScope {
  chunks: number;
  indexedChunks: number;
  /** indexedChunks as a whole percentage of chunks; 100 for an empty scope with an index. */
  percent: number;
  state: 'none' | 'extending' | 'ready';
  /** How retrieve() searches the scope now. */
  search: 'exact' | 'index';
  /**
   * Where the scope's index lives: `in-process`, a graph in the server's memory (the embedded database; rebuilt
   * from the table after every start), or `pgvector`, an HNSW index in the database (a server database).
   */
  index: 'in-process' | 'pgvector';
  /** The scope size from which the ingest job gives a scope an index. */
  indexFromChunks: number;
}

export interface IndexScopeOptions {
  /**
   * Called after every step (a few hundred milliseconds of work each): chunks added to the index so far in this
   * call, of those it found outside the index, and that as a whole percentage.
   */
  onProgress?: (progress: { added: number; toAdd: number; percent: number }) => void | Promise<void>;
}

/**
 * Documents chunked, embedded and searched over pgvector, isolated by scenario.
 * Every method throws VECTOR_STORE_UNAVAILABLE on a PostgreSQL server without pgvector. Callers that trace
 * (runAgent) wrap retrieve in their own `retrieval` span, so the store records none.
 */
export interface RagStore {
  ingestDocument(input: IngestInput): Promise<IngestResult>;
  /**
   * An unknown collection (nothing ingested into it yet) gives [], like a scenario with no documents. Never
   * builds an index: a scope without one is searched exactly (search-plan.ts).
   */
  retrieve(query: RetrieveQuery): Promise<ReferenceChunk[]>;
  /** False when there was no such document. Writes an audit entry naming `actor` (default 'system'). */
  deleteDocument(documentId: string, actor?: string): Promise<boolean>;
  /** Most recently updated first. */
  listDocuments(filter?: { scenarioId?: string }): Promise<DocumentInfo[]>;
  getDocument(documentId: string): Promise<DocumentInfo | undefined>;
  /**
   * Builds or extends the scope's index (the background ingest job calls it after ingesting): a scope large
   * enough gets an HNSW index, and chunks ingested since are added to it in short steps. Returns the status after.
   */
  indexScope(scope: SearchScope, options?: IndexScopeOptions): Promise<ScopeIndexStatus & { steps: number; longestStepMs: number }>;
  indexStatus(scope: SearchScope): Promise<ScopeIndexStatus>;
}
