import { readFileSync } from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../../core/paths.js';
import type { RagStore } from '../../rag/index.js';
import { ingestProtocolDocument } from '../protocol-documents/protocol-documents.js';
import { DEMO_PROJECT } from './demo-definition.js';

/** The demo trial's protocol, the same text the protocol-qa scenario ships with. */
const demoProtocolFile = (): string => path.join(packageRoot(), 'scenarios', 'documents', 'protocol-qa', 'DEMO-HTN-01-protocol.md');

/**
 * Gives the demo project its protocol, so the trial assistant's `search_protocol` answers from the first start.
 * Unchanged text is not embedded again (the RAG store compares content hashes).
 */
export async function ensureDemoProtocol(rag: RagStore, file = demoProtocolFile()): Promise<{ chunks: number; unchanged: boolean }> {
  const result = await ingestProtocolDocument(rag, DEMO_PROJECT.id, { sourceFile: path.basename(file), text: readFileSync(file, 'utf8') }, 'system');
  return { chunks: result.chunks, unchanged: result.unchanged };
}
