import type { ChatMessage } from '../core/llm/types.js';
import { DATA_NOT_INSTRUCTIONS, dataBlock } from '../core/llm/untrusted-data.js';
import type { OutputType } from '../core/structured/output-types.js';
import { fitToBudget } from '../core/tokenizer.js';
import type { ReferenceChunk } from '../rag/index.js';
import type { Scenario } from './scenarios/load.js';

/**
 * Builds the messages of a run: the scenario's instruction, the output format it expects, the retrieved
 * references numbered [1]..[n] so the model can cite them, then the user's input. Document excerpts and
 * tool results are untrusted (an uploaded file can say "ignore your instructions"), so each goes in its own
 * data block and the system message says such blocks are data, never instructions.
 */
export function buildMessages(scenario: Scenario, input: string, references: ReferenceChunk[]): ChatMessage[] {
  const system = [scenario.instructions.trim()];
  const format = formatInstruction(scenario.output);
  if (format) system.push(format);
  if (references.length || scenario.tools.length) system.push(DATA_NOT_INSTRUCTIONS);
  const messages: ChatMessage[] = [{ role: 'system', content: system.join('\n\n') }];
  if (references.length) {
    const context = references.map((ref, i) => dataBlock('document', `[${i + 1}] (${ref.sourceFile}, ${ref.chunkId})\n${ref.content.trim()}`)).join('\n\n');
    messages.push({
      role: 'system',
      content: `Reference excerpts from this scenario's documents. Answer from them, cite them as [n], and say so when they do not contain the answer.\n\n${context}`,
    });
  }
  messages.push({ role: 'user', content: input });
  return messages;
}

/** The tool message content: the result or the error of one call, as data (a tool may return record text). */
export function toolResultContent(outcome: { success: boolean; result: unknown; error?: string }): string {
  return dataBlock('tool_result', outcome.success ? { result: outcome.result } : { error: outcome.error });
}

/** Keeps the best-scoring references that fit the scenario's context budget (tokens, not characters). */
export function fitReferences(references: ReferenceChunk[], maxContextTokens: number): ReferenceChunk[] {
  return fitToBudget(references, (ref) => ref.content, maxContextTokens);
}

function formatInstruction(outputType: OutputType): string | undefined {
  if (!outputType.schema) return undefined;
  return `Reply with one JSON object only (no prose around it) that matches this JSON Schema:\n${JSON.stringify(outputType.schema)}`;
}
