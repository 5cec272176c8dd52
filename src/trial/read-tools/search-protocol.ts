import { z } from 'zod';
import type { ToolDefinition } from '../../core/tools/registry.js';
import type { RagStore } from '../../rag/index.js';
import { PROTOCOL_COLLECTION, projectScope, protocolDocumentsHelp } from '../protocol-documents/protocol-documents.js';

const Args = z.object({
  query: z.string().trim().min(1, 'say what to look for in the protocol').max(1000).describe('what to look for, in Chinese or English, e.g. "V2 visit window" or "入组年龄"'),
  top_k: z.number().int().min(1).max(10).default(5).describe('how many passages to return, 1-10'),
});
type Args = z.infer<typeof Args>;

/**
 * Retrieval over this project's protocol documents only (scope `project:<id>`). A project without documents,
 * or a server without a vector store, is a normal answer rather than a failed call: the model should tell the
 * user what is missing and how to add it, not retry.
 */
export function searchProtocolTool(deps: { rag: RagStore; hasVectorStore: boolean }, projectId: string): ToolDefinition<Args> {
  return {
    name: 'search_protocol',
    description: "Search this project's protocol documents (protocol, CRF guidelines, amendments) and return the most relevant passages with their source file and chunk id, to quote and cite.",
    schema: Args,
    async run({ query, top_k: topK }) {
      if (!deps.hasVectorStore) {
        return { query, chunks: [], note: `This project has no searchable protocol documents: this server's database has no vector store (pgvector), so documents can be neither stored nor searched. Tell the user to ask the server's operator to install pgvector. ${protocolDocumentsHelp(projectId)}` };
      }
      const hits = await deps.rag.retrieve({ scenarioId: projectScope(projectId), collection: PROTOCOL_COLLECTION, query, topK });
      if (hits.length === 0) {
        return { query, chunks: [], note: `This project has no protocol documents yet, so the protocol cannot be quoted. ${protocolDocumentsHelp(projectId)}` };
      }
      return {
        query,
        chunks: hits.map((hit) => ({ source_file: hit.sourceFile, chunk_id: hit.chunkId, score: Math.round(hit.score * 1000) / 1000, text: hit.content })),
      };
    },
  };
}
