import { z } from 'zod';
import { agentId, jsonAnswer, type AgentDefinition } from '../../runtime/definitions/index.js';
import type { HotMemoryLine } from '../types.js';
import { cleanText, isSection, makeLine } from './lines.js';
import { buildPruneMessages, PRUNE_OUTPUT } from './prompts.js';

export const PRUNER = 'memory-pruner';

interface PruneInput {
  lines: readonly HotMemoryLine[];
  maxTokens: number;
  targetTokens: number;
}

/**
 * The condensed memory as the model writes it. Items are read leniently (one without a section or text is left
 * out, the rest kept); what makes the answer unusable is having no line at all, or dropping every prohibition.
 */
const condensedSchema = z.object({
  lines: z.array(z.unknown(), { error: 'must be a non-empty array of {section, text, from}' }).min(1, 'must be a non-empty array of {section, text, from}'),
});

/** The model's lines, each with the source of the first input line it names; a line naming none gets the pruner's. */
function condensedLines(raw: readonly unknown[], input: readonly HotMemoryLine[]): HotMemoryLine[] {
  const now = new Date().toISOString();
  const lines: HotMemoryLine[] = [];
  for (const item of raw as Array<Record<string, unknown> | null>) {
    if (!isSection(item?.section) || typeof item.text !== 'string' || !cleanText(item.text)) continue;
    const from = Array.isArray(item.from) ? item.from.map(Number).find((n) => Number.isInteger(n) && n >= 1 && n <= input.length) : undefined;
    const origin = from === undefined ? undefined : input[from - 1]!;
    lines.push(origin ? makeLine(item.section, item.text, origin.source, origin.addedBy, origin.addedAt) : makeLine(item.section, item.text, { kind: 'user', ref: PRUNER }, PRUNER, now));
  }
  return lines;
}

/** What makes a condensed memory unusable for these input lines: no usable line, or the prohibitions gone. */
function condensedProblems(raw: readonly unknown[], input: readonly HotMemoryLine[]): string[] {
  const lines = condensedLines(raw, input);
  if (!lines.length) return ['lines: no line had a section (preferences, state or prohibitions) and a non-empty text.'];
  if (input.some((l) => l.section === 'prohibitions') && !lines.some((l) => l.section === 'prohibitions')) {
    return ['lines: the prohibitions were dropped; every prohibition must be kept (shortened or merged if need be).'];
  }
  return [];
}

/**
 * Hot-memory pruning (seed 002 §5.1): two tries at a condensed memory, the second told what was wrong with the
 * first. An unreachable model is one more failed try: the fallback is a notice to the admin, not a dead job.
 */
/** Its id in the registry, typed: `agents.get(PRUNE_AGENT)`. */
export const PRUNE_AGENT = agentId<PruneInput, HotMemoryLine[]>('memory_prune');

export const PRUNE_DEFINITION: AgentDefinition<PruneInput, HotMemoryLine[]> = {
  id: PRUNE_AGENT,
  name: 'Hot-memory pruning',
  description: "Condenses a project's hot memory when it outgrows its token cap, keeping every prohibition.",
  sourceFile: 'builtin:src/memory/hot/prune-definition.ts',
  instructions: buildPruneMessages,
  tools: [],
  decision: { mode: 'native' },
  output: PRUNE_OUTPUT,
  answer: jsonAnswer(condensedSchema, {
    name: PRUNE_OUTPUT.name,
    // Only the top level: one odd item (a section the prompt does not name) is left out, not a reason to ask again.
    parserSchema: { type: 'object', properties: { lines: { type: 'array' } }, required: ['lines'] },
    missingFields: 'fill',
    check: (answer, input) => condensedProblems(answer.lines, input?.lines ?? []),
    map: (answer, input) => condensedLines(answer.lines, input?.lines ?? []),
  }),
  answerShape: '{"lines": [{"section": "preferences" | "state" | "prohibitions", "text": "...", "from": [1, 4]}]}',
  stop: { attempts: 2, modelErrorsAreAttempts: true },
  history: { strategy: 'none' },
  model: { temperature: 0, jsonMode: true },
  engine: { type: 'builtin' },
};
