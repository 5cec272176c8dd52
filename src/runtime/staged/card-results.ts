import { isDeepStrictEqual } from 'node:util';
import { ClinAgentError } from '../../core/errors.js';
import type { ToolCallResult, ToolRegistry } from '../../core/tools/registry.js';
import { applyCardResult } from './action-cards.js';
import type { ActionCardConfig, StageConfig } from './config.js';
import { getPath, isPresent } from './context-paths.js';
import { valueSizeProblem, valueTypeProblem } from './context-values.js';

/**
 * Results a tool computes (a card with `resultTool`: the sample size calculator). Such a value is recorded only as
 * the tool computed it: from the tool's call in a stage turn, or from a card callback whose result is computed
 * again from its inputs. Neither a client's word nor the model's is taken for it.
 */

/** The stage's cards whose result a tool computes. */
export function calculatingCards(stage: StageConfig): ActionCardConfig[] {
  return stage.actionCards.filter((card) => card.resultTool && card.resultMapping);
}

/** Keys of the stage's own field that only a tool fills (`total`, `perGroup`), from its cards' resultMappings. */
export function calculatedKeys(stage: StageConfig): Map<string, string> {
  const keys = new Map<string, string>();
  for (const card of calculatingCards(stage)) {
    for (const path of Object.values(card.resultMapping!)) {
      const [field, key] = path.split('.');
      if (field === stage.contextField && key) keys.set(key, card.resultTool!);
    }
  }
  return keys;
}

/** A tool call's result as the card's resultMapping reads it: the result, and the inputs it was computed from. */
function mappedResult(call: ToolCallResult): Record<string, unknown> {
  const result = call.result && typeof call.result === 'object' && !Array.isArray(call.result) ? (call.result as Record<string, unknown>) : {};
  return { ...result, inputs: call.arguments };
}

interface RecordedToolResults {
  context: Record<string, Record<string, unknown>>;
  /** What was recorded into the stage's own field, keyed as in it. */
  stageData: Record<string, unknown>;
  /** The tools whose results were recorded, in call order. */
  tools: string[];
}

/** Each successful call of a calculating card's tool this turn, recorded through the card's resultMapping (the last call wins). */
export function recordToolResults(stage: StageConfig, context: Record<string, Record<string, unknown>>, calls: readonly ToolCallResult[]): RecordedToolResults {
  let next: Record<string, unknown> = context;
  const stageData: Record<string, unknown> = {};
  const tools: string[] = [];
  for (const call of calls) {
    if (!call.success) continue;
    for (const card of calculatingCards(stage).filter((c) => c.resultTool === call.toolName)) {
      // A result with none of the mapped values (a tool answering in another shape) records nothing; the turn goes on.
      let applied: ReturnType<typeof applyCardResult>;
      try {
        applied = applyCardResult(card, mappedResult(call), next);
      } catch (error) {
        if (ClinAgentError.isInstance(error) && error.code === 'VALIDATION_FAILED') continue;
        throw error;
      }
      next = applied.context;
      for (const path of Object.keys(applied.applied)) {
        const [field, key] = path.split('.');
        if (field === stage.contextField && key) stageData[key] = getPath(next, `${field}.${key}`);
      }
      if (!tools.includes(call.toolName)) tools.push(call.toolName);
    }
  }
  return { context: next as RecordedToolResults['context'], stageData, tools };
}

/**
 * A callback's result for a card whose tool computes it: the tool runs again on `result.inputs`, each value the
 * client sent must be what it computes, and what is recorded is the tool's own answer. Any disagreement is a 400
 * naming the field, what was sent and what the inputs give.
 */
export async function computedCardResult(tools: ToolRegistry, card: ActionCardConfig, result: Record<string, unknown>): Promise<Record<string, unknown>> {
  const tool = card.resultTool!;
  const inputs = result.inputs;
  if (!inputs || typeof inputs !== 'object' || Array.isArray(inputs)) {
    throw new ClinAgentError('VALIDATION_FAILED', `result.inputs: required, the inputs ${tool} computed the result from (an object); the result is computed again from them before it is recorded.`, { field: 'result.inputs' });
  }
  const run = await tools.run(tool, inputs);
  if (!run.success) throw new ClinAgentError('VALIDATION_FAILED', `result.inputs: ${tool} cannot compute a result from them: ${run.error}`, { field: 'result.inputs' });
  const computed = mappedResult(run);
  const contradictions: string[] = [];
  for (const key of Object.keys(card.resultMapping ?? {})) {
    if (key === 'inputs' || key.startsWith('inputs.')) continue;
    const sent = getPath(result, key);
    if (!isPresent(sent)) continue;
    const expected = getPath(computed, key);
    if (!isDeepStrictEqual(sent, expected)) contradictions.push(`result.${key}: ${preview(sent)} is not what ${tool} computes from result.inputs (${preview(expected)})`);
  }
  if (contradictions.length) {
    throw new ClinAgentError('VALIDATION_FAILED', `${contradictions.join('; ')}. Send the calculator's result unchanged, or only its inputs.`, { field: 'result', problems: contradictions });
  }
  return computed;
}

/** A value as a message quotes it: short, whatever was sent (a 900 kB string is not echoed back). */
function preview(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}... (${text.length} characters)` : text;
}

/** Problems of each value a card's result puts into a stage's field: its declared type and its size, as an edit's. */
export function appliedValueProblems(stages: readonly StageConfig[], card: ActionCardConfig, applied: Record<string, unknown>): string[] {
  const keyOf = new Map(Object.entries(card.resultMapping ?? {}).map(([key, path]) => [path, key]));
  const problems: string[] = [];
  for (const [path, value] of Object.entries(applied)) {
    const [field, key, ...deeper] = path.split('.');
    const stage = stages.find((s) => s.contextField === field);
    const typeProblem = stage && key && !deeper.length ? valueTypeProblem(stage.extractionSchema, key, value) : undefined;
    for (const problem of [typeProblem, valueSizeProblem(value)]) if (problem) problems.push(`result.${keyOf.get(path) ?? path} ${problem}`);
  }
  return problems;
}
