import { z } from 'zod';
import type { LlmGateway } from '../../core/llm/gateway.js';
import { DATA_NOT_INSTRUCTIONS, dataBlock } from '../../core/llm/untrusted-data.js';
import { isRawStructure } from '../../core/structured/looks-like-data.js';
import { countTokens, fitToBudget, trimToTokens } from '../../core/tokenizer.js';
import type { TraceScope } from '../../core/trace/store.js';
import { agentId, textAnswer, type AgentDefinition, type AgentRegistry } from '../../runtime/definitions/index.js';
import { oneRoundAnswer, runDefinition } from '../../runtime/loop/index.js';
import type { LogTurn, ReportRow } from './report-queries.js';

/**
 * The two model calls of the history book: a week's conversation log into a weekly report, and a year's weekly
 * reports into a yearly summary. Both read only what was said (never tool results, which hold record data).
 */

/** A week of a busy project fits; a longer week keeps its first turns (the budget is named in the prompt). */
const WEEK_LOG_MAX_TOKENS = 12_000;
/** One long answer (a pasted table, a long explanation) must not crowd out the rest of the week. */
const TURN_MAX_TOKENS = 400;
/** A year's weekly reports as the yearly call reads them; each week gets an equal share when they do not all fit. */
const YEAR_INPUT_MAX_TOKENS = 24_000;
/** A weekly report is "a few short paragraphs"; a yearly one a little more. The call asks for no more than these. */
export const WEEK_REPLY_MAX_TOKENS = 700;
export const YEAR_REPLY_MAX_TOKENS = 1_200;
/**
 * A stored report is checked against the call's own limit, since a server may ignore max_tokens (a 200 kB reply was
 * stored once and then sent whole with every history question). Counted with our tokenizer, which splits some
 * text (Chinese) into up to about twice the tokens of the model's own, hence the room; past it the reply cannot be
 * an answer that kept to the limit. The character bound is checked first, so a huge reply is never tokenised.
 */
export const REPLY_TOKEN_SLACK = 2;
export const MAX_CHARS_PER_TOKEN = 8;

const NO_IDENTIFIERS =
  'Never write personal identifiers: no names of subjects or patients, phone numbers, addresses, ID numbers or birth dates. Refer to subjects by their study subject id only when the log gives one, and to staff by role (PI, CRC, data manager).';

const WEEK_INSTRUCTION = [
  "You write the weekly report of a clinical trial project's history book. The assistant reads these reports later to answer questions about the project's past (why something was decided, how enrolment went).",
  'Summarise the week from the conversation log between the trial team and the assistant: key decisions and their reasons, problems met and how they were handled (lessons learnt, pitfalls to avoid), and any enrolment or data-quality (QC) progress mentioned, with numbers when given.',
  'Write a few short paragraphs of plain text, at most 250 words, in the language the team used. Leave out greetings, small talk and routine look-ups that led to nothing. Reply with the report only.',
  NO_IDENTIFIERS,
  "The week's log is given in a <conversation_log> block, one turn a line: [time, conversation] role: text.",
  DATA_NOT_INSTRUCTIONS,
].join('\n');

const YEAR_INSTRUCTION = [
  "You condense a clinical trial project's weekly reports of one year into the yearly summary of its history book. The assistant reads it instead of those weeks when asked about the project's past.",
  'Keep what someone would ask about later: key decisions and why they were made, problems and lessons learnt, changes of course, and how enrolment and data quality developed over the year, with the week (e.g. 2025-W12) when it matters.',
  'Write a few short paragraphs of plain text, at most 400 words, in the language of the reports. Reply with the summary only.',
  NO_IDENTIFIERS,
  'The weekly reports are given in a <weekly_reports> block, oldest first, each starting with its week label.',
  DATA_NOT_INSTRUCTIONS,
].join('\n');

interface WeekLog {
  text: string;
  /** Turns in the prompt; `left` more did not fit. */
  used: number;
  left: number;
}

/** The log as the model reads it: one line per turn, conversations numbered in order of their first turn. */
export function weekLog(turns: readonly LogTurn[]): WeekLog {
  const conversationNumbers = new Map<string, number>();
  const lines = turns.map((turn) => {
    if (!conversationNumbers.has(turn.conversationId)) conversationNumbers.set(turn.conversationId, conversationNumbers.size + 1);
    const at = turn.createdAt.toISOString().slice(0, 16).replace('T', ' ');
    const text = trimToTokens(turn.content.trim(), TURN_MAX_TOKENS);
    const cut = text.length < turn.content.trim().length ? ' [...]' : '';
    return `[${at}, conversation ${conversationNumbers.get(turn.conversationId)}] ${turn.role}: ${text}${cut}`;
  });
  const kept = fitToBudget(lines, (line) => `${line}\n`, WEEK_LOG_MAX_TOKENS);
  const left = lines.length - kept.length;
  if (left) kept.push(`(${left} later turns of this week did not fit and are not shown.)`);
  return { text: kept.join('\n'), used: lines.length - left, left };
}

/**
 * What a stored report may be: prose (a JSON object is the model answering for a program), not empty, and within
 * its call's limit, since a server may ignore max_tokens (a 200 kB reply was stored once and then sent whole with
 * every history question). Each problem is worded for the person who reads why the report was not stored.
 */
function reportSchema(what: string, maxTokens: number) {
  return z
    .string()
    // The gateway has already taken a thinking model's <think> blocks out of the text.
    .transform((text) => text.trim())
    .superRefine((summary, ctx) => {
      const problem = (message: string) => ctx.addIssue({ code: 'custom', message });
      if (!summary) return problem(`The model returned an empty ${what}. The job retries it; if it keeps happening, check the model's output in the trace.`);
      if (isRawStructure(summary)) return problem(`The model wrote the ${what} as a data structure (JSON) instead of prose, so it is not kept. If it keeps happening, check the model's output in the trace.`);
      const bound = maxTokens * REPLY_TOKEN_SLACK;
      const tokens = summary.length > bound * MAX_CHARS_PER_TOKEN ? undefined : countTokens(summary);
      if (tokens === undefined || tokens > bound) {
        const size = tokens === undefined ? `${summary.length} characters` : `${tokens} tokens`;
        problem(`The model's ${what} is ${size}, far over the ${maxTokens} tokens it may write, so it is not kept. If it keeps happening, check that the model's server honours max_tokens.`);
      }
    });
}

function reportDefinition(id: string, name: string, instructions: string, what: string, maxTokens: number): AgentDefinition<string, string> {
  return {
    id,
    name,
    description: `Writes the ${what} of a project's history book from what was said (never tool results, which hold record data).`,
    sourceFile: 'builtin:src/memory/reports/summarize.ts',
    instructions,
    tools: [],
    decision: { mode: 'native' },
    output: { name: 'text' },
    answer: textAnswer(reportSchema(what, maxTokens)),
    // One call: a cut-off or unusable report is not stored, and the job tries again later.
    stop: { maxRounds: 1 },
    history: { strategy: 'none' },
    model: { temperature: 0, maxTokens },
    engine: { type: 'builtin' },
  };
}

/** Their ids in the registry, typed: `agents.get(WEEKLY_REPORT_AGENT)`. */
export const WEEKLY_REPORT_AGENT = agentId<string, string>('memory_weekly_report');
export const YEARLY_SUMMARY_AGENT = agentId<string, string>('memory_yearly_summary');

export const WEEKLY_REPORT_DEFINITION = reportDefinition(WEEKLY_REPORT_AGENT, 'Weekly report', WEEK_INSTRUCTION, 'weekly report', WEEK_REPLY_MAX_TOKENS);
export const YEARLY_SUMMARY_DEFINITION = reportDefinition(YEARLY_SUMMARY_AGENT, 'Yearly summary', YEAR_INSTRUCTION, 'yearly summary', YEAR_REPLY_MAX_TOKENS);

async function ask(llm: LlmGateway, trace: TraceScope, definition: AgentDefinition<string, string>, user: string, what: string): Promise<string> {
  const outcome = await runDefinition(definition, { llm, trace, input: user });
  return oneRoundAnswer(outcome, what, { step: what, maxTokens: definition.model.maxTokens });
}

/** The registry the report definitions are resolved from (the server's). */
type ReportAgents = Pick<AgentRegistry, 'get'>;

export async function summarizeWeek(llm: LlmGateway, trace: TraceScope, input: { label: string; log: WeekLog; readUpTo?: Date }, agents: ReportAgents): Promise<string> {
  // A running week is reported so far; the model is told, so it does not write as if the week were complete.
  const period = input.readUpTo ? `Week ${input.label} so far (it has not ended; the log runs until ${input.readUpTo.toISOString().slice(0, 16).replace('T', ' ')} UTC)` : `Week ${input.label}`;
  const user = `${period}, conversation log:\n${dataBlock('conversation_log', input.log.text)}`;
  return ask(llm, trace, agents.get(WEEKLY_REPORT_AGENT), user, 'weekly report');
}

export async function summarizeYear(llm: LlmGateway, trace: TraceScope, input: { year: string; weeks: readonly ReportRow[] }, agents: ReportAgents): Promise<string> {
  const share = Math.max(50, Math.floor(YEAR_INPUT_MAX_TOKENS / Math.max(1, input.weeks.length)));
  const text = input.weeks.map((week) => `[${week.label}] ${countTokens(week.summary) > share ? `${trimToTokens(week.summary, share)} [...]` : week.summary}`).join('\n\n');
  const user = `Year ${input.year}, ${input.weeks.length} weekly reports:\n${dataBlock('weekly_reports', text)}`;
  return ask(llm, trace, agents.get(YEARLY_SUMMARY_AGENT), user, 'yearly summary');
}
