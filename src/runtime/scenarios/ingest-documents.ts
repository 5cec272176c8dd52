import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { ClinAgentError } from '../../core/errors.js';
import type { IndexScopeOptions, RagStore } from '../../rag/index.js';
import { extractText } from '../../rag/index.js';
import type { Scenario } from './load.js';

/**
 * Ingests the documents a scenario ships with, then builds or extends the scenario's search index, so chunks
 * uploaded since (POST /api/rag/documents sends this job) join it too. Document ids derive from the scenario and
 * file name, so a restart re-ingests nothing that has not changed (the store compares content hashes).
 */
export async function ingestScenarioDocuments(rag: RagStore, scenario: Scenario, options: IndexScopeOptions = {}): Promise<Array<{ documentId: string; chunks: number; unchanged: boolean }>> {
  if (!scenario.rag.enabled) return [];
  const results = [];
  for (const file of scenario.documents) {
    const sourceFile = path.basename(file);
    const text = await extractText(sourceFile, new Uint8Array(await readFile(file)));
    results.push(await rag.ingestDocument({ documentId: scenarioDocumentId(scenario.id, sourceFile), scenarioId: scenario.id, sourceFile, text, collection: scenario.rag.collection }));
  }
  await rag.indexScope({ scenarioId: scenario.id, collection: scenario.rag.collection }, options);
  return results;
}

export function scenarioDocumentId(scenarioId: string, sourceFile: string): string {
  return `${scenarioId}--${sourceFile.replace(/[^A-Za-z0-9._-]+/g, '_')}`;
}

