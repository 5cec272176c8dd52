import { assertProjectReader, assertProjectWriter } from '../../core/auth/project-access.js';
import type { MembershipCheck } from '../../core/auth/membership.js';
import type { User } from '../../core/auth/users.js';
import type { Jobs } from '../../core/jobs/boss.js';
import type { RagStore } from '../../rag/index.js';
import { assertVectorStore, deleteProtocolDocument, ingestProtocolDocument, listProtocolDocuments, PROTOCOL_COLLECTION, projectScope, type ProtocolDocumentInput } from './protocol-documents.js';

interface ProtocolDocumentServiceDeps {
  users: MembershipCheck;
  /** Each project's protocol documents, searched by the assistant's search_protocol tool. */
  rag: RagStore;
  /** False on a PostgreSQL without pgvector: protocol documents answer VECTOR_STORE_UNAVAILABLE. */
  hasVectorStore: boolean;
  /** Where an upload's index build is sent; without it (a one-shot command) the upload indexes in place. */
  jobs?: Jobs;
}

/**
 * A trial's protocol documents: members list them, writers add and delete them. Membership is checked first, so
 * a non-member learns nothing, not even that pgvector is missing.
 */
export function createProtocolDocumentService(deps: ProtocolDocumentServiceDeps) {
  const { users, rag, hasVectorStore, jobs } = deps;
  return {
    list: async (actor: User, projectId: string) => {
      await assertProjectReader(users, actor, projectId);
      assertVectorStore(hasVectorStore, projectId);
      return listProtocolDocuments(rag, projectId);
    },
    /** Text with its file name, or an uploaded .txt/.md/.pdf; a document of the same file name is replaced. */
    ingest: async (actor: User, projectId: string, input: ProtocolDocumentInput) => {
      await assertProjectWriter(users, actor, projectId);
      assertVectorStore(hasVectorStore, projectId);
      return ingestProtocolDocument(rag, projectId, input, actor.name, { jobs });
    },
    /** Where the search index of the project's protocol documents stands (the rag-index-scope job builds it). */
    searchIndex: async (actor: User, projectId: string) => {
      await assertProjectReader(users, actor, projectId);
      assertVectorStore(hasVectorStore, projectId);
      return rag.indexStatus({ scenarioId: projectScope(projectId), collection: PROTOCOL_COLLECTION });
    },
    delete: async (actor: User, projectId: string, documentId: string) => {
      await assertProjectWriter(users, actor, projectId);
      assertVectorStore(hasVectorStore, projectId);
      await deleteProtocolDocument(rag, projectId, documentId, actor.name);
    },
  };
}

export type ProtocolDocumentService = ReturnType<typeof createProtocolDocumentService>;
