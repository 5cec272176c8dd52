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

/**
 * Documents chunked, embedded and searched over pgvector, isolated by scenario.
 * Every method throws VECTOR_STORE_UNAVAILABLE on a PostgreSQL server without pgvector. Callers that trace
 * (runAgent) wrap retrieve in their own `retrieval` span, so the store records none.
 */
export interface RagStore {
  ingestDocument(input: IngestInput): Promise<IngestResult>;
  /** An unknown collection (nothing ingested into it yet) gives [], like a scenario with no documents. */
  retrieve(query: RetrieveQuery): Promise<ReferenceChunk[]>;
  /** False when there was no such document. Writes an audit entry naming `actor` (default 'system'). */
  deleteDocument(documentId: string, actor?: string): Promise<boolean>;
  /** Most recently updated first. */
  listDocuments(filter?: { scenarioId?: string }): Promise<DocumentInfo[]>;
  getDocument(documentId: string): Promise<DocumentInfo | undefined>;
}
