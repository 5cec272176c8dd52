import { z } from 'zod';
import { ApiErrorBody, errorResponses, textParams } from './common.js';

/**
 * A trial project's protocol documents (protocol, CRF guidelines, amendments): what the trial assistant's
 * search_protocol tool searches. One document per file name and project; uploading the same file name again
 * replaces it.
 */
const ProtocolDocument = z.object({
  documentId: z.string(),
  sourceFile: z.string(),
  chunkCount: z.int(),
  contentHash: z.string().describe('sha256 of the ingested text, hex'),
  updatedAt: z.string(),
});
type ProtocolDocument = z.infer<typeof ProtocolDocument>;

/** GET /api/iit/projects/:projectId/protocol-documents */
export const ProtocolDocumentList = z.object({ documents: z.array(ProtocolDocument) });
export type ProtocolDocumentList = z.infer<typeof ProtocolDocumentList>;

/** POST /api/iit/projects/:projectId/protocol-documents: JSON {sourceFile, text}, or multipart with `file`. */
export const IngestProtocolDocumentRequest = z.strictObject({
  sourceFile: z.string().min(1).max(255).optional().describe('the file name the text came from; with a multipart file, defaults to its name'),
  text: z.string().min(1).optional(),
  file: z.object({}).optional().describe('multipart only: the file (.txt .md .pdf)'),
});
export type IngestProtocolDocumentRequest = z.input<typeof IngestProtocolDocumentRequest>;

export const IngestProtocolDocumentResponse = z.object({
  documentId: z.string(),
  sourceFile: z.string(),
  chunks: z.int(),
  unchanged: z.boolean().describe('true when the text matched the stored one, so nothing was re-embedded'),
  replaced: z.boolean().describe('true when a document of the same file name in this project was replaced'),
});
export type IngestProtocolDocumentResponse = z.infer<typeof IngestProtocolDocumentResponse>;

export const ProtocolDocumentParams = textParams('projectId', 'documentId');

/** Besides the usual errors: 503 when the server's PostgreSQL has no pgvector (VECTOR_STORE_UNAVAILABLE). */
export const protocolErrorResponses = { ...errorResponses, 503: ApiErrorBody } as const;
