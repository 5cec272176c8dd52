import type { ChatMessage } from '../core/llm/types.js';
import type { OutputType } from '../core/structured/output-types.js';
import { fitToBudget } from '../core/tokenizer.js';
import type { ReferenceChunk } from '../rag/index.js';
import type { Scenario } from './scenarios/load.js';

/**
 * Builds the messages of a run: the scenario's instruction, the output format it expects, the retrieved
 * references numbered [1]..[n] so the model can cite them, then the user's input.
 */
export function buildMessages(scenario: Scenario, input: string, references: ReferenceChunk[]): ChatMessage[] {
  const system = [scenario.systemPrompt.trim()];
  const format = formatInstruction(scenario.outputType);
  if (format) system.push(format);
  const messages: ChatMessage[] = [{ role: 'system', content: system.join('\n\n') }];
  if (references.length) {
    const context = references.map((ref, i) => `[${i + 1}] (${ref.sourceFile}, ${ref.chunkId})\n${ref.content.trim()}`).join('\n\n');
    messages.push({
      role: 'system',
      content: `Reference excerpts from this scenario's documents. Answer from them, cite them as [n], and say so when they do not contain the answer.\n\n${context}`,
    });
  }
  messages.push({ role: 'user', content: input });
  return messages;
}

/** Keeps the best-scoring references that fit the scenario's context budget (tokens, not characters). */
export function fitReferences(references: ReferenceChunk[], maxContextTokens: number): ReferenceChunk[] {
  return fitToBudget(references, (ref) => ref.content, maxContextTokens);
}

function formatInstruction(outputType: OutputType): string | undefined {
  if (!outputType.schema) return undefined;
  return `Reply with one JSON object only (no prose around it) that matches this JSON Schema:\n${JSON.stringify(outputType.schema)}`;
}
