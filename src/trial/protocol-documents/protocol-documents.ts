import { createHash } from 'node:crypto';
import { ClinAgentError } from '../../core/errors.js';
import type { Jobs } from '../../core/jobs/boss.js';
import { extractText, projectScope, type RagStore } from '../../rag/index.js';
import { vectorStoreUnavailable } from '../../rag/rag-errors.js';
import { requestScopeIndex } from '../../runtime/scope-index-job.js';

/**
 * A project's protocol documents (protocol, CRF completion guidelines, amendments) live in the RAG store
 * beside the scenarios' documents, isolated by a scope of their own: `project:<id>` is never a scenario id
 * (scenario ids allow no colon), so no scenario search and no other project can reach them.
 */
export const PROTOCOL_COLLECTION = 'protocol';

export { projectScope } from '../../rag/index.js';

export interface ProtocolDocument {
  documentId: string;
  sourceFile: string;
  chunkCount: number;
  /** sha256 of the ingested text, hex. */
  contentHash: string;
  /** ISO 8601. */
  updatedAt: string;
}

/** Text with the file name it came from, or an uploaded file (.txt .md .pdf) whose text is extracted here. */
export interface ProtocolDocumentInput {
  sourceFile?: string;
  text?: string;
  file?: { filename: string; data: Uint8Array };
}

export interface IngestProtocolResult {
  documentId: string;
  sourceFile: string;
  chunks: number;
  /** True when the text matched the stored one, so nothing was re-embedded. */
  unchanged: boolean;
  /** True when a document of the same file name in this project was replaced. */
  replaced: boolean;
}

const MAX_SOURCE_FILE = 255;

export function protocolDocumentsHelp(projectId: string): string {
  return `A coordinator or PI adds them with POST /api/iit/projects/${projectId}/protocol-documents (JSON {"sourceFile": "protocol.md", "text": "..."} or a multipart "file" part: .txt, .md or .pdf).`;
}

/** No pgvector: say what is unavailable for this project and how the operator installs it. */
export function assertVectorStore(hasVectorStore: boolean, projectId: string): void {
  if (hasVectorStore) return;
  const base = vectorStoreUnavailable();
  throw new ClinAgentError('VECTOR_STORE_UNAVAILABLE', `Protocol documents of project "${projectId}" are stored and searched with pgvector. ${base.message}`, { projectId });
}

export async function listProtocolDocuments(rag: RagStore, projectId: string): Promise<ProtocolDocument[]> {
  const documents = await rag.listDocuments({ scenarioId: projectScope(projectId) });
  return documents
    .filter((document) => document.collection === PROTOCOL_COLLECTION)
    .map(({ documentId, sourceFile, chunkCount, contentHash, updatedAt }) => ({ documentId, sourceFile, chunkCount, contentHash, updatedAt }));
}

/**
 * One document per file name and project: the id is derived from both, so ingesting "protocol.md" again
 * replaces its chunks in one upsert (two concurrent uploads of the same file take turns on the row rather
 * than leaving two copies), and a project's id can never name another project's document.
 */
function protocolDocumentId(projectId: string, sourceFile: string): string {
  return `protocol_${createHash('sha256').update(`${projectId}\n${sourceFile}`, 'utf8').digest('hex').slice(0, 32)}`;
}

/**
 * Stores the document, then has the project's search index extended by the background job (`jobs`), or here when
 * there is no job queue. An unchanged document added no chunk, so it asks for nothing.
 */
export async function ingestProtocolDocument(rag: RagStore, projectId: string, input: ProtocolDocumentInput, actor: string, options: { jobs?: Jobs } = {}): Promise<IngestProtocolResult> {
  const { sourceFile, text } = await readInput(input);
  const documentId = protocolDocumentId(projectId, sourceFile);
  const replaced = (await rag.getDocument(documentId)) !== undefined;
  const scope = { scenarioId: projectScope(projectId), collection: PROTOCOL_COLLECTION };
  const result = await rag.ingestDocument({ documentId, ...scope, sourceFile, text, actor });
  if (!result.unchanged) await requestScopeIndex({ rag, jobs: options.jobs }, scope);
  return { documentId, sourceFile, chunks: result.chunks, unchanged: result.unchanged, replaced };
}

/** A document of another project, a scenario's document or an unknown id: all answer NOT_FOUND alike. */
export async function deleteProtocolDocument(rag: RagStore, projectId: string, documentId: string, actor: string): Promise<void> {
  const document = await rag.getDocument(documentId);
  const isOurs = document?.scenarioId === projectScope(projectId) && document.collection === PROTOCOL_COLLECTION;
  if (!isOurs || !(await rag.deleteDocument(documentId, actor))) {
    throw new ClinAgentError('NOT_FOUND', `Protocol document "${documentId}" does not exist in project "${projectId}". List the project's documents with GET /api/iit/projects/${projectId}/protocol-documents.`, { projectId, documentId });
  }
}

async function readInput(input: ProtocolDocumentInput): Promise<{ sourceFile: string; text: string }> {
  let sourceFile: string | undefined;
  let text: string;
  if (input.file) {
    sourceFile = input.sourceFile ?? input.file.filename;
    text = await extractText(input.file.filename, input.file.data);
  } else if (input.text !== undefined) {
    if (!input.sourceFile?.trim()) throw invalid('sourceFile', 'sourceFile: is required with text; give the file name the text came from (e.g. "protocol-v2.1.md").');
    sourceFile = input.sourceFile;
    text = input.text;
  } else {
    throw invalid('text', 'Send either JSON with "text" and "sourceFile", or a multipart form with a "file" part (.txt, .md or .pdf).');
  }
  sourceFile = sourceFile.trim();
  if (!sourceFile || sourceFile.length > MAX_SOURCE_FILE) throw invalid('sourceFile', `sourceFile: must be 1 to ${MAX_SOURCE_FILE} characters, got ${sourceFile.length}.`);
  // An empty document would have no chunk to find; a scanned PDF without a text layer ends up here too.
  if (!text.trim()) throw invalid('text', `"${sourceFile}" has no text to search. Upload the protocol as text, Markdown or a PDF with a text layer (run OCR on a scanned PDF first).`);
  return { sourceFile, text };
}

const invalid = (field: string, message: string) => new ClinAgentError('VALIDATION_FAILED', message, { field });
