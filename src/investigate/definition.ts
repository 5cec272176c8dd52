import { z } from 'zod';
import { agentId, textAnswer, type AgentDefinition } from '../runtime/definitions/index.js';
import { buildQuestionMessages, emptyAnswerCorrection, shorterAnswerCorrection, type QuestionContext } from './prompt.js';
import { READ_ONLY_TOOLS } from './read-only-tools.js';

/** What a question is built from: the question, its language, the memory blocks, and the tools this project has. */
export interface QuestionInput {
  question: string;
  language: 'zh' | 'en';
  context: QuestionContext;
  tools: ReadonlyArray<{ name: string; description: string }>;
}

/**
 * An answer is a few paragraphs a person reads in the console, not a report: the model is asked for at most this
 * many tokens (a longer one is cut off, and a cut-off answer is never kept), and an endpoint that ignores the limit
 * is held to MAX_ANSWER_CHARS. Enough for a table of a dozen records with a line each.
 */
export const MAX_ANSWER_TOKENS = 2000;
/** About MAX_ANSWER_TOKENS of English (4 characters a token); Chinese text is shorter per token, so it fits too. */
export const MAX_ANSWER_CHARS = 8000;

const EMPTY_ANSWER = 'the answer is empty';

/**
 * The answer the user gets, bounded: an endpoint that ignores max_tokens could send hundreds of kilobytes, which
 * would be shown, stored in the conversation and sent on as history. Too long is asked again, never cut.
 */
const questionAnswerSchema = z
  .string()
  .transform((text) => text.trim())
  .superRefine((answer, ctx) => {
    if (!answer) ctx.addIssue({ code: 'custom', message: EMPTY_ANSWER });
    else if (answer.length > MAX_ANSWER_CHARS) ctx.addIssue({ code: 'custom', message: `the answer is ${answer.length} characters; at most ${MAX_ANSWER_CHARS} are shown` });
  });

/** Seed 000's hallucination breaker: two failed tool calls in a row and the model is not going to recover. */
export const DEFAULT_MAX_FAILED_TOOL_CALLS = 2;

/**
 * Earlier turns a question sees: the newest user and assistant texts that fit this many tokens. Tool turns are not
 * replayed: the engine reads data again through its tools rather than from old output.
 */
const EARLIER_TURNS_TOKENS = 1500;

/**
 * The read-only ReAct engine of the trial assistant (seed 000 section 5). Its tools are the project's read tools,
 * bound per request; its limits come from the assistant's settings (ASSISTANT_MAX_ITERATIONS, _TOKEN_BUDGET), so
 * `investigate` runs it with those in `stop`.
 */
/** Its id in the registry, typed: `agents.get(INVESTIGATE_AGENT)`. */
export const INVESTIGATE_AGENT = agentId<QuestionInput, string>('investigate');

export const INVESTIGATE_DEFINITION: AgentDefinition<QuestionInput, string> = {
  id: INVESTIGATE_AGENT,
  name: 'Trial questions (read-only)',
  description: "Answers a question about a trial's data, protocol and history with read-only tools.",
  sourceFile: 'builtin:src/investigate/definition.ts',
  // The trial assistant's engine: any member asks it questions in a chat.
  kind: 'conversation',
  instructions: buildQuestionMessages,
  tools: [],
  requestTools: READ_ONLY_TOOLS,
  toolUse: { whenWithheld: 'refuse', scope: 'for trial questions (read-only)' },
  decision: { mode: 'native' },
  output: { name: 'text' },
  answer: textAnswer(questionAnswerSchema),
  // An empty answer is asked for again; any other problem (too long, cut off) asks for a shorter one, in the user's language.
  correction: (problems, input) => {
    const language = input?.language ?? 'en';
    return problems.every((problem) => problem.endsWith(EMPTY_ANSWER)) ? emptyAnswerCorrection(language) : shorterAnswerCorrection(language, MAX_ANSWER_CHARS);
  },
  // The budget is for reasoning (answers, tool calls, observations), not for re-sending hot memory every round.
  stop: { errorBreaker: DEFAULT_MAX_FAILED_TOOL_CALLS, maxRounds: 5, reasoningBudget: 4000 },
  history: { strategy: 'sliding_window', maxTokens: EARLIER_TURNS_TOKENS, textOnly: true },
  model: { maxTokens: MAX_ANSWER_TOKENS },
  engine: { type: 'builtin' },
};
