import { isDeepStrictEqual } from 'node:util';
import type { LoopOutcome } from '../loop/run-loop.js';
import { calculatedKeys, recordToolResults } from './card-results.js';
import type { StageConfig } from './config.js';
import { isPresent, keyWords, mergeStageData } from './context-paths.js';
import { extractStageData, splitExtractedData, type StageExtraction } from './extraction.js';
import { uncalculatedStatements } from './stated-results.js';
import { noReplyMessage, turnText } from './turn-reply.js';
import type { StagedChatResponse, StagedRunState } from './types.js';

/**
 * What one stage turn records and what it tells the user. Its tools' results go in as computed; from the model's
 * data block only values that are grounded (extraction.ts), that no tool alone may fill, and, when the block did
 * not parse cleanly, that replace nothing already recorded. Whatever is left out for one of these reasons is
 * said, in the reply and in the turn's issues: the researcher's record never silently differs from the answer.
 */
interface TurnRecord {
  context: StagedRunState['context'];
  /** The reply the user reads, with the notes on what was not recorded. */
  message: string;
  contextUpdate: StagedChatResponse['contextUpdate'];
  issues: string[];
  extraction?: StageExtraction;
  recordedFromTools: string[];
}

export function recordTurn(stage: StageConfig, state: StagedRunState, outcome: LoopOutcome<unknown>, options: { message: string; shouldExtract: boolean }): TurnRecord {
  const field = stage.contextField;
  const before = state.context[field] ?? {};
  const text = turnText(outcome);
  const split = splitExtractedData(text);
  const fromTools = recordToolResults(stage, state.context, outcome.toolCalls);
  let context = fromTools.context;
  let recorded: Record<string, unknown> = { ...fromTools.stageData };
  const calculated = calculatedKeys(stage);
  const claimed: string[] = [];
  const claimTools = new Set<string>();
  const notes: string[] = [];
  let extraction: StageExtraction | undefined;

  if (options.shouldExtract && outcome.kind === 'final' && split.raw !== undefined) {
    // What counts as said: every user message of the conversation, this one, what tools computed this turn, and
    // what the context already holds (values the user typed in the state panel).
    const sources = [...state.history.filter((l) => l.role === 'user').map((l) => l.content), options.message, ...outcome.toolCalls.filter((c) => c.success).map((c) => JSON.stringify(c.result)), JSON.stringify(state.context)];
    extraction = extractStageData({ reply: text, schema: stage.extractionSchema, sources });
    const kept: Record<string, unknown> = {};
    const keptBack: string[] = [];
    for (const [key, value] of Object.entries(extraction.data)) {
      const tool = calculated.get(key);
      if (tool) {
        // A value a tool computed (this turn, or earlier and recorded) restated is no claim; anything else is the model's.
        if (!isDeepStrictEqual(context[field]?.[key], value)) {
          claimed.push(`${keyWords(key)} ${displayed(value)}`);
          claimTools.add(tool);
          extraction.rejected.push({ path: key, value, reason: `only ${tool} fills it (the tool in this stage or its card)` });
        }
        continue;
      }
      if (extraction.parsedAs === 'repaired' && isPresent(before[key])) {
        keptBack.push(key);
        extraction.rejected.push({ path: key, value, reason: 'the data block had to be repaired, and a repaired value never replaces a recorded one' });
        continue;
      }
      kept[key] = value;
    }
    if (keptBack.length) notes.push(`Not recorded: ${keptBack.map(keyWords).join(', ')}. This answer's data block was broken and had to be repaired, so it does not replace what ${stage.stageName} already holds; say it again, or edit it in the state panel.`);
    if (extraction.parsedAs === 'failed') {
      const named = namedKeys(split.raw ?? '', stage.extractionSchema);
      notes.push(`Not recorded: ${named.length ? named.map(keyWords).join(', ') : 'anything from this answer'}. This answer's data block could not be read (cut off or malformed), so nothing in it was recorded; say it again, or edit it in the state panel.`);
    }
    recorded = mergeStageData(recorded, kept);
    context = { ...context, [field]: mergeStageData(context[field] ?? {}, kept) };
  }

  const computed = [...outcome.toolCalls.filter((c) => c.success).map((c) => c.result), ...[...calculated.keys()].map((key) => context[field]?.[key])];
  const stated = uncalculatedStatements(stage, split.message, computed);
  stated.tools.forEach((tool) => claimTools.add(tool));
  if (stated.statements.length || claimed.length) {
    const tools = [...claimTools].join(' or ');
    const parts = [...stated.statements.map((s) => `"${s}"`), ...(claimed.length ? [`the data block's ${claimed.join(', ')}`] : [])];
    notes.unshift(`Not calculated: ${parts.join(' and ')} ${parts.length > 1 ? 'were' : 'was'} stated without ${tools}, so none of it is recorded. Use the calculator card, or give the inputs so that ${tools} computes it.`);
  }

  const written = readableLength(split.message) || noReplyMessage(outcome, { tools: fromTools.tools, summary: summaryOf(fromTools.stageData) });
  return {
    context,
    message: [written, ...notes.map((note) => `⚠ ${note}`)].join('\n\n'),
    contextUpdate: Object.keys(recorded).length ? { field, data: recorded, confidence: extraction?.rejected.length ? 0.7 : 0.9 } : null,
    issues: notes,
    extraction,
    recordedFromTools: fromTools.tools,
  };
}

/**
 * Longest reply shown and kept in the history. A stage turn's answer is capped by maxTokens (a few thousand
 * characters); anything far longer is a model running on, which would fill the page, the log and every later prompt.
 */
export const MAX_REPLY_CHARS = 10_000;

/** The reply, cut at the last paragraph or sentence before the limit when it runs past it, saying so. */
function readableLength(reply: string): string {
  if (reply.length <= MAX_REPLY_CHARS) return reply;
  const head = reply.slice(0, MAX_REPLY_CHARS);
  const end = Math.max(head.lastIndexOf('\n\n'), head.lastIndexOf('. ') + 1, head.lastIndexOf('。') + 1);
  return `${(end > MAX_REPLY_CHARS / 2 ? head.slice(0, end) : head).trimEnd()}\n\n(The answer was cut here: it ran to ${reply.length} characters.)`;
}

/** The schema's keys a block names (`"question":`), read from text the parser could not use. */
function namedKeys(raw: string, schema: Record<string, unknown>): string[] {
  const declared = Object.keys(((schema as { properties?: Record<string, unknown> }).properties) ?? {});
  return [...new Set([...raw.matchAll(/["']([A-Za-z][A-Za-z0-9_]*)["']\s*:/g)].map((m) => m[1]!))].filter((key) => declared.includes(key));
}

function displayed(value: unknown): string {
  return Array.isArray(value) ? value.map(displayed).join(', ') : typeof value === 'string' ? value : JSON.stringify(value);
}

/** "total 128; per group 64, 64; method ..." of what a tool recorded (not its inputs and assumptions, which the panel shows). */
function summaryOf(data: Record<string, unknown>): string {
  return Object.entries(data)
    .filter(([key]) => key !== 'inputs' && key !== 'assumptions')
    .map(([key, value]) => `${keyWords(key)} ${displayed(value)}`)
    .join('; ');
}
