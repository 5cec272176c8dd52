import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { closeContext, createContext } from '../context.js';
import { loadConfig } from '../core/config.js';
import { ClinAgentError } from '../core/errors.js';
import { extractText } from '../rag/index.js';

export async function ingestCommand(args: string[]): Promise<number> {
  const [scenarioId, file, documentId] = args;
  if (!scenarioId || !file) {
    throw new ClinAgentError('VALIDATION_FAILED', 'Usage: clinagent ingest <scenarioId> <file> [documentId], e.g. clinagent ingest protocol-qa ./protocol.pdf');
  }
  const ctx = await createContext(loadConfig());
  try {
    const scenario = ctx.scenarios.get(scenarioId);
    if (!scenario.rag.enabled) throw new ClinAgentError('VALIDATION_FAILED', `Scenario "${scenarioId}" does not use RAG (rag.enabled is false in ${scenario.sourceFile}).`);
    const bytes = await readFile(file).catch((error: NodeJS.ErrnoException) => {
      throw new ClinAgentError('NOT_FOUND', `Cannot read ${file}: ${error.code === 'ENOENT' ? 'no such file' : error.message}.`);
    });
    const sourceFile = path.basename(file);
    const text = await extractText(sourceFile, new Uint8Array(bytes));
    const result = await ctx.rag.ingestDocument({ documentId, scenarioId, sourceFile, text, collection: scenario.rag.collection });
    process.stdout.write(`${result.unchanged ? 'Unchanged' : 'Ingested'} ${sourceFile} as ${result.documentId}: ${result.chunks} chunks.\n`);
    // What the background ingest job would do, here in the foreground: the command ends with the index current.
    const status = await ctx.rag.indexScope({ scenarioId, collection: scenario.rag.collection }, {
      onProgress: ({ added, toAdd, percent }) => void process.stdout.write(`Indexing: ${added} of ${toAdd} chunks added to the search index (${percent}%).\n`),
    });
    process.stdout.write(
      status.state === 'none'
        ? `Search index: none needed (${status.chunks} chunks; a scenario gets one from ${status.indexFromChunks}); searches are exact.\n`
        : `Search index: ${status.state}, ${status.indexedChunks} of ${status.chunks} chunks (${status.percent}%).\n`,
    );
    return 0;
  } finally {
    await closeContext(ctx);
  }
}
