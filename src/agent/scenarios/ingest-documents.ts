import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { ClinAgentError } from '../../core/errors.js';
import type { RagStore } from '../../rag/index.js';
import { extractText } from '../../rag/index.js';
import type { Scenario } from './load.js';

/**
 * Ingests the documents a scenario ships with. Document ids derive from the scenario and file name, so a
 * restart re-ingests nothing that has not changed (the store compares content hashes).
 */
export async function ingestScenarioDocuments(rag: RagStore, scenario: Scenario): Promise<Array<{ documentId: string; chunks: number; unchanged: boolean }>> {
  if (!scenario.rag.enabled) return [];
  const results = [];
  for (const file of scenario.documents) {
    const sourceFile = path.basename(file);
    const text = await extractText(sourceFile, new Uint8Array(await readFile(file)));
    results.push(await rag.ingestDocument({ documentId: scenarioDocumentId(scenario.id, sourceFile), scenarioId: scenario.id, sourceFile, text, collection: scenario.rag.collection }));
  }
  return results;
}

export function scenarioDocumentId(scenarioId: string, sourceFile: string): string {
  return `${scenarioId}--${sourceFile.replace(/[^A-Za-z0-9._-]+/g, '_')}`;
}

/** The scenario whose `documents:` list ships this document, or undefined for a document a user ingested. */
export function shippingScenario(scenarios: readonly Scenario[], documentId: string): Scenario | undefined {
  return scenarios.find((scenario) => scenario.documents.some((file) => scenarioDocumentId(scenario.id, path.basename(file)) === documentId));
}

/**
 * A shipped document is part of the scenario's definition (its answers cite it), so only an admin may delete or
 * replace it; documents users ingested stay theirs to change, as for any writer.
 */
export function assertMayChangeDocument(scenarios: readonly Scenario[], documentId: string, user: { role: string }, change: 'delete' | 'replace'): void {
  const scenario = shippingScenario(scenarios, documentId);
  if (!scenario || user.role === 'admin') return;
  throw new ClinAgentError(
    'FORBIDDEN',
    `Document "${documentId}" ships with scenario "${scenario.id}" (documents: in ${path.basename(scenario.sourceFile)}) and is ingested at start-up; only an admin may ${change} it, your role is "${user.role}". Ask an admin, or ingest your own document under another id.`,
    { documentId, scenarioId: scenario.id, role: user.role, needs: ['admin'] },
  );
}
