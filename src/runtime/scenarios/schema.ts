import { readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { errorMessage } from '../../core/errors.js';
import { resolveOutputType } from '../../core/structured/output-types.js';
import { difyBaseUrlProblem, type DifyUrlPolicy } from './dify-base-url.js';
import { mcpBlock, mcpBlockProblems, type McpToolSource } from './mcp-block.js';
import { DIFY_INPUT_LIMITS, DifyInputValue, DifyVariableName } from '../../contract/agent.js';

/** A scenario file as written by a user (snake_case, YAML or JSON). */
const jsonSchemaObject = z.record(z.string(), z.unknown()).refine((schema) => schema.type === 'object', {
  message: 'must be a JSON Schema whose "type" is "object"',
});

const outputTypeField = z.union([
  z.string().min(1),
  z.object({ name: z.string().min(1), schema: jsonSchemaObject, answer_field: z.string().optional() }).strict(),
]);

/**
 * How much of a conversation the model sees again (runtime/conversations/history-strategy.ts). Default: every
 * turn, capped at 8000 tokens, which leaves room for the system prompt, references and the answer in the 32k
 * context of the models we deploy (Qwen, DeepSeek). `max_turns` belongs to sliding_window, `keep_turns` to summary.
 */
const historyBlock = z
  .object({
    strategy: z.enum(['full', 'sliding_window', 'summary']).default('full'),
    max_turns: z.number().int().min(1).max(1000).optional(),
    max_tokens: z.number().int().min(100).max(200_000).default(8000),
    keep_turns: z.number().int().min(1).max(1000).optional(),
  })
  .strict()
  .superRefine((history, ctx) => {
    if (history.strategy === 'summary' && history.keep_turns === undefined) ctx.addIssue({ code: 'custom', path: ['keep_turns'], message: 'required when strategy is summary: how many recent turns stay verbatim' });
    if (history.strategy !== 'summary' && history.keep_turns !== undefined) ctx.addIssue({ code: 'custom', path: ['keep_turns'], message: 'applies only to strategy summary' });
    if (history.strategy !== 'sliding_window' && history.max_turns !== undefined) ctx.addIssue({ code: 'custom', path: ['max_turns'], message: 'applies only to strategy sliding_window' });
  })
  .optional();

const idPattern = /^[a-z0-9][a-z0-9_-]{0,63}$/;
const positive = (what: string) => z.number().int().min(1, `must be at least 1 (${what})`).max(1_000_000).optional();

/**
 * Who runs the scenario (seed 004 section 11). A Dify app is named by its API's base URL and the environment
 * variable that holds its key: the key itself never sits in a file. Only `DIFY_` variables can be named, so a
 * scenario file can never make the server send DATABASE_URL, AUDIT_KEY or an LLM key to a URL of its choice.
 * `inputs` are the app's start-form values every run sends (a run may add its own over them); a workflow reads
 * the run's text from `input_variable` and answers with its output `output_key`, a completion app reads it from
 * `inputs.query` unless `input_variable` names another variable.
 */
const DIFY_ONLY = ['base_url', 'api_key_env', 'app_mode', 'inputs', 'input_variable', 'output_key'] as const;

const engineBlock = z
  .object({
    type: z.enum(['builtin', 'dify', 'openai-agents'], { message: 'must be builtin (the one agent loop, the default), openai-agents (the OpenAI Agents SDK run loop) or dify (an app on a Dify server)' }).default('builtin'),
    base_url: z.string().min(1).optional(),
    api_key_env: z
      .string()
      .regex(/^DIFY_[A-Z0-9_]{1,100}$/, 'must be the name of an environment variable starting with DIFY_ (capitals, digits, _), e.g. DIFY_MY_APP_KEY; the key is read from it, never written in the file')
      .optional(),
    app_mode: z
      .enum(['chat', 'agent', 'completion', 'workflow'], { message: 'must be chat (chat apps and chatflows), agent, completion or workflow' })
      .optional(),
    inputs: z
      .record(z.string(), DifyInputValue)
      .superRefine((inputs, ctx) => {
        // The name's own message per key (zod's record says only "Invalid key in record").
        for (const name of Object.keys(inputs)) {
          const checked = DifyVariableName.safeParse(name);
          if (!checked.success) ctx.addIssue({ code: 'custom', path: [name], message: checked.error.issues[0]!.message });
        }
        if (Object.keys(inputs).length > DIFY_INPUT_LIMITS.variables) ctx.addIssue({ code: 'custom', message: `at most ${DIFY_INPUT_LIMITS.variables} variables` });
      }, { when: (payload) => isObject(payload.value) })
      .optional(),
    input_variable: DifyVariableName.optional(),
    output_key: z.string().min(1).max(200).optional(),
  })
  .strict()
  .superRefine(
    (engine, ctx) => {
      // Also when a field above failed, so one pass names every problem of the block (the value may be raw here).
      if (engine.type === 'dify') {
        if (!engine.base_url) ctx.addIssue({ code: 'custom', path: ['base_url'], message: "required with type dify: the app's API base URL, e.g. https://dify.example.org/v1" });
        if (!engine.api_key_env) ctx.addIssue({ code: 'custom', path: ['api_key_env'], message: "required with type dify: the environment variable holding the app's API key, e.g. DIFY_MY_APP_KEY" });
        const mode = engine.app_mode ?? 'chat';
        if (mode === 'workflow') {
          if (!engine.input_variable) ctx.addIssue({ code: 'custom', path: ['input_variable'], message: "required with app_mode workflow: the start-form variable the run's text goes into, e.g. question" });
          if (!engine.output_key) ctx.addIssue({ code: 'custom', path: ['output_key'], message: "required with app_mode workflow: the workflow output that is the answer (its End node's variable), e.g. answer" });
        } else {
          if (engine.output_key !== undefined) ctx.addIssue({ code: 'custom', path: ['output_key'], message: 'applies only to app_mode workflow (other apps answer with their message)' });
          if (mode !== 'completion' && engine.input_variable !== undefined) ctx.addIssue({ code: 'custom', path: ['input_variable'], message: 'applies only to app_mode workflow or completion (chat and agent apps take the text as their query)' });
        }
        const textVariable = engine.input_variable ?? (mode === 'completion' ? 'query' : undefined);
        if (textVariable && engine.inputs && typeof engine.inputs === 'object' && textVariable in engine.inputs) {
          ctx.addIssue({ code: 'custom', path: ['inputs', textVariable], message: `is where each run's text goes (${engine.input_variable ? 'input_variable' : 'a completion app\'s query'}); leave it out of inputs` });
        }
      } else if (engine.type === 'builtin' || engine.type === 'openai-agents') {
        for (const field of DIFY_ONLY) if (engine[field] !== undefined) ctx.addIssue({ code: 'custom', path: [field], message: 'applies only to type dify' });
      }
    },
    { when: (payload) => isObject(payload.value) },
  );

/**
 * How the model acts each round: native function calling (the default), or one JSON decision per round whose
 * `action` is one of `actions` (seed 003); `tool_action` runs a tool, `wait_on` names the actions that wait for a person.
 */
const decisionBlock = z
  .object({
    mode: z.enum(['native', 'json'], { message: 'must be native (function calling) or json (one JSON decision per round)' }),
    actions: z.array(z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, 'must be a lowercase action name, e.g. respond')).min(1).optional(),
    tool_action: z.string().min(1).optional(),
    wait_on: z.record(z.string(), z.enum(['answer', 'approval'], { message: 'must be answer or approval' })).optional(),
  })
  .strict()
  .superRefine((decision, ctx) => {
    if (decision.mode === 'native') {
      for (const field of ['actions', 'tool_action', 'wait_on'] as const) if (decision[field] !== undefined) ctx.addIssue({ code: 'custom', path: [field], message: 'applies only to mode json' });
      return;
    }
    const actions = decision.actions ?? [];
    if (!decision.actions) ctx.addIssue({ code: 'custom', path: ['actions'], message: 'required with mode json: the actions the model may take, e.g. [use_tool, respond]' });
    if (decision.tool_action !== undefined && !actions.includes(decision.tool_action)) ctx.addIssue({ code: 'custom', path: ['tool_action'], message: `must be one of actions (${actions.join(', ')})` });
    for (const action of Object.keys(decision.wait_on ?? {})) {
      if (!actions.includes(action)) ctx.addIssue({ code: 'custom', path: ['wait_on', action], message: `must be one of actions (${actions.join(', ')})` });
      if (action === (decision.tool_action ?? 'use_tool')) ctx.addIssue({ code: 'custom', path: ['wait_on', action], message: 'the tool action runs a tool; it cannot also wait for a person' });
    }
  });

/** When a turn stops besides a final answer; each limit is off when absent. */
const stopBlock = z
  .object({
    max_rounds: positive('model calls per turn'),
    token_budget: positive('tokens a turn sends and receives'),
    reasoning_budget: positive('tokens a turn adds beyond its fixed context'),
    error_breaker: positive('failed tool calls in a row'),
    attempts: positive('unusable answers plus failed tool rounds'),
  })
  .strict();

const ragBlock = z
  .object({
    enabled: z.boolean().default(false),
    collection: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/i, 'must be 1-64 letters, digits, - or _').optional(),
    top_k: z.number().int().min(1).max(50).default(5),
    max_context_tokens: z.number().int().min(100).max(100_000).default(3000),
  })
  .strict()
  .superRefine(
    (rag, ctx) => {
      if (rag.enabled === true && !rag.collection) ctx.addIssue({ code: 'custom', path: ['collection'], message: 'required when rag.enabled is true' });
    },
    { when: (payload) => isObject(payload.value) },
  );

const modelBlock = z
  .object({
    name: z.string().min(1).optional(),
    temperature: z.number().min(0).max(2).optional(),
    max_tokens: z.number().int().min(1).max(200_000).optional(),
  })
  .strict();

/**
 * What only the built-in engine reads. A Dify app has its own prompt, tools, knowledge, model and memory of the
 * conversation, so giving any of these with `engine.type: dify` is an error rather than a setting silently ignored.
 */
const BUILTIN_ONLY_FIELDS = ['system_prompt', 'rag', 'tools', 'mcp', 'output_type', 'model', 'max_tool_rounds', 'documents', 'history', 'decision', 'stop'] as const;

/** What the OpenAI Agents SDK engine cannot honour: retrieval, documents, a JSON decision loop. */
const OPENAI_AGENTS_UNSUPPORTED = ['rag', 'documents', 'decision'] as const;

export const scenarioFileSchema = z
  .object({
    id: z.string().regex(idPattern, 'must be 1-64 lowercase letters, digits, - or _, starting with a letter or digit'),
    name: z.string().min(1),
    description: z.string().default(''),
    engine: engineBlock.default({ type: 'builtin' }),
    system_prompt: z.string().min(1, 'must not be empty: it is the instruction the model works from').optional(),
    rag: ragBlock.optional(),
    tools: z.array(z.string().min(1)).optional(),
    // Tools of MCP servers the administrator configured (mcp-block.ts), run as mcp__<server>__<tool>.
    mcp: mcpBlock.optional(),
    output_type: outputTypeField
      .superRefine((declared, ctx) => {
        if (typeof declared !== 'string') return;
        try {
          resolveOutputType(declared);
        } catch (error) {
          ctx.addIssue({ code: 'custom', message: errorMessage(error) });
        }
      })
      .optional(),
    model: modelBlock.optional(),
    max_tool_rounds: z.number().int().min(0).max(20).optional(),
    documents: z.array(z.string().min(1)).optional(),
    history: historyBlock,
    decision: decisionBlock.optional(),
    stop: stopBlock.optional(),
  })
  .strict()
  .superRefine(
    (file, ctx) => {
      // Also when a field failed (the value may be raw then), so one pass names every problem of a file.
      const engineType = isObject(file.engine) ? file.engine.type : 'builtin';
      if (engineType === 'dify') {
        for (const field of BUILTIN_ONLY_FIELDS) {
          if (file[field] !== undefined) ctx.addIssue({ code: 'custom', path: [field], message: 'not allowed with engine.type dify: the Dify app has its own prompt, tools, knowledge, model and conversation memory; set them in Dify' });
        }
      } else if ((engineType === 'builtin' || engineType === 'openai-agents') && file.system_prompt === undefined) {
        ctx.addIssue({ code: 'custom', path: ['system_prompt'], message: 'required: the instruction the model works from (or engine.type dify to run a Dify app instead)' });
      }
      if (engineType === 'openai-agents') {
        // The SDK's run loop has no retrieval, JSON decision mode or budgets of ours: refused rather than ignored.
        for (const field of OPENAI_AGENTS_UNSUPPORTED) {
          if (file[field] !== undefined) ctx.addIssue({ code: 'custom', path: [field], message: 'not supported with engine.type openai-agents (docs/agent-engines.md); use engine.type builtin for it' });
        }
        const stop: unknown = file.stop;
        for (const field of isObject(stop) ? Object.keys(stop).filter((key) => key !== 'max_rounds') : []) {
          ctx.addIssue({ code: 'custom', path: ['stop', field], message: 'not supported with engine.type openai-agents: only stop.max_rounds (the SDK\'s max turns) applies' });
        }
      }
    },
    { when: (payload) => isObject(payload.value) },
  );

/** What a file is checked against besides its own text: where it sits, the server's Dify URL policy, the tools that exist. */
interface ScenarioChecks {
  /** The folder of the file: documents are named relative to it. */
  baseDir: string;
  policy: DifyUrlPolicy;
  /** The registry's tool names; absent: tools are checked when the catalog is made (createScenarioCatalog). */
  toolNames?: ReadonlySet<string>;
  /** The configured MCP servers; absent: none is, and a file naming one is invalid. */
  mcp?: McpToolSource;
}

/**
 * The file schema with the checks that need the world outside the file: documents that exist, a Dify base URL
 * the server allows, tools that are registered. They run in the same pass as the schema, also when another field
 * failed, so a file is reported whole in one start rather than one layer of problems per restart.
 */
export function scenarioFileSchemaFor(checks: ScenarioChecks) {
  return scenarioFileSchema.superRefine(
    (file, ctx) => {
      const documents: unknown = file.documents;
      if (Array.isArray(documents)) {
        documents.forEach((doc, i) => {
          if (typeof doc !== 'string' || !doc) return;
          const resolved = path.resolve(checks.baseDir, doc);
          try {
            readFileSync(resolved);
          } catch {
            // Named as the author wrote it (relative to the file's folder): GET /api/scenarios shows this to every user.
            ctx.addIssue({ code: 'custom', path: ['documents', i], message: `file ${doc} does not exist or cannot be read` });
          }
        });
      }
      const engine: unknown = file.engine;
      if (isObject(engine) && engine.type === 'dify' && typeof engine.base_url === 'string' && engine.base_url) {
        const problem = difyBaseUrlProblem(engine.base_url, checks.policy);
        if (problem) ctx.addIssue({ code: 'custom', path: ['engine', 'base_url'], message: problem });
      }
      const tools: unknown = file.tools;
      if (checks.toolNames && Array.isArray(tools)) {
        const known = [...checks.toolNames].join(', ') || '(none)';
        tools.forEach((name, i) => {
          if (typeof name === 'string' && name && !checks.toolNames!.has(name)) ctx.addIssue({ code: 'custom', path: ['tools', i], message: `"${name}" is not a registered tool (known: ${known})` });
        });
      }
      mcpBlockProblems(file.mcp, checks.mcp, ctx);
    },
    { when: (payload) => isObject(payload.value) },
  );
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
