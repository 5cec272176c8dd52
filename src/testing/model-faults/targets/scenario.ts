import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { Ajv } from 'ajv';
import { ingestScenarioDocuments } from '../../../runtime/scenarios/ingest-documents.js';
import { loadScenarios, type Scenario } from '../../../runtime/scenarios/load.js';
import { packageRoot } from '../../../core/paths.js';
import type { JsonSchema } from '../../../core/structured/output-types.js';
import { streamedStatus } from '../fault-server.js';
import type { FaultTarget } from '../target.js';
import { nativeToolCall, reply } from './shapes.js';

const ajv = new Ajv({ allErrors: true, strict: false });
/** Faults that are unusable whatever the output type: text agents included. */
const NEVER_AN_ANSWER = new Set(['unknown_tool', 'tool_loop', 'http_500', 'timeout', 'empty']);

/** The scenarios shipped in scenarios/: each one is a row of the matrix, run through POST /api/agent/run. */
export function shippedScenarios(): Scenario[] {
  return loadScenarios(path.join(packageRoot(), 'scenarios'));
}

/**
 * Shipped scenarios the suite also runs on the OpenAI Agents SDK engine (`engine: {type: openai-agents}`), each under
 * an id of its own: what the platform promises above the model must hold on that engine too.
 */
const AGENTS_SDK_VARIANTS: readonly string[] = ['data-completeness'];
const agentsSdkId = (id: string) => `${id}-agents-sdk`;

/** The variants' scenario files, by file name: the shipped file with its id and engine changed (the fault server serves them). */
export function agentsSdkScenarioFiles(): Record<string, string> {
  return Object.fromEntries(
    AGENTS_SDK_VARIANTS.map((id) => {
      // `rag` is refused with that engine, even switched off: the variants are of scenarios without retrieval.
      const { rag: _rag, ...file } = parse(readFileSync(path.join(packageRoot(), 'scenarios', `${id}.yaml`), 'utf8')) as Record<string, unknown>;
      return [`${agentsSdkId(id)}.yaml`, stringify({ ...file, id: agentsSdkId(id), engine: { type: 'openai-agents' } })];
    }),
  );
}

/** The variants as the fault server loads them from agentsSdkScenarioFiles. */
export function agentsSdkScenarios(): Scenario[] {
  return shippedScenarios()
    .filter((scenario) => AGENTS_SDK_VARIANTS.includes(scenario.id))
    .map((scenario) => ({ ...scenario, id: agentsSdkId(scenario.id), engine: { type: 'openai-agents' } }));
}

/** A value of the schema's shape, each string holding `text`: what a model that follows the schema sends. */
function sampleOf(schema: JsonSchema | undefined, text: string): unknown {
  if (!schema) return { answer: text };
  if (Array.isArray(schema.enum) && schema.enum.length) return schema.enum[0];
  switch (schema.type) {
    case 'string':
      return text;
    case 'number':
      return 0.5;
    case 'integer':
      return 1;
    case 'boolean':
      return true;
    case 'array':
      return [sampleOf(schema.items as JsonSchema | undefined, text)];
    default: {
      const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
      return Object.fromEntries(Object.entries(properties).map(([key, inner]) => [key, sampleOf(inner, key === 'citations' ? '[1]' : text)]));
    }
  }
}

/**
 * What the console shows of a structured answer while it streams (web/src/stores/chat-stream.ts previewText): once
 * the text opens as an object with the answer field as a string, that string as far as it has come; other JSON
 * nothing; plain text as it is.
 */
function consolePreview(watched: string, answerField: string | undefined): string {
  if (!answerField) return watched;
  const start = new RegExp(`^\\s*(?:\`\`\`(?:json)?\\s*)?\\{[\\s\\S]*?"${answerField}"\\s*:\\s*"`).exec(watched);
  if (!start) return /^\s*(?:```|\{|\[)/.test(watched) ? '' : watched;
  let end = start[0].length;
  while (end < watched.length && watched[end] !== '"') end += watched[end] === '\\' ? 2 : 1;
  try {
    return JSON.parse(`"${watched.slice(start[0].length, Math.min(end, watched.length))}"`) as string;
  } catch {
    return watched.slice(start[0].length, end);
  }
}

/**
 * A shipped scenario through POST /api/agent/run. A run is reported a success only with an answer of its declared
 * shape, after at least one usable model answer, and no tool outside the scenario's list ever ran.
 */
export function scenarioTarget(scenario: Scenario, { streamed = false }: { streamed?: boolean } = {}): FaultTarget {
  const schema = scenario.output.schema;
  const validate = schema ? ajv.compile(schema) : undefined;
  return {
    id: `scenario ${scenario.id}${streamed ? ' (streamed)' : ''}`,
    covers: [scenario.id],
    // RAG reads a pgvector collection; the machine's PostgreSQL has none.
    engines: scenario.rag.enabled ? ['pglite'] : ['pglite', 'postgres'],
    // max_tool_rounds, one answer after them, and up to three corrections of an unusable answer.
    maxModelCalls: (scenario.stop.maxToolRounds ?? 4) + 4,
    turnLimitMs: 15_000,
    async setUp(server) {
      const { token } = await server.ctx.users.create({ name: `faults-${scenario.id}${streamed ? '-stream' : ''}`, role: 'coordinator' });
      if (scenario.rag.enabled && server.ctx.hasVectorStore) await ingestScenarioDocuments(server.ctx.rag, server.ctx.scenarios.get(scenario.id));
      // The text goes where the person reads it (the answer field); the other fields stay short, so a 200 kB answer is 200 kB.
      const answer = (text: string) => {
        if (!schema) return text;
        const value = sampleOf(schema, 'complete') as Record<string, unknown>;
        return JSON.stringify(scenario.output.answerField ? { ...value, [scenario.output.answerField]: text } : value);
      };
      const loopTool = scenario.tools[0] ?? 'query_demo_records';
      let conversationId: string | undefined;
      return {
        healthy: () => reply(answer('The protocol excludes patients under 18 [1].')),
        sample: () => sampleOf(schema, 'The records are complete.'),
        embedJson: (json) => reply(json),
        say: (text) => reply(answer(text)),
        callTool: (name, args) => nativeToolCall(name, args),
        loopTool: { name: loopTool, arguments: loopTool === 'check_required_fields' ? { fields: ['age'] } : {} },
        async turn() {
          const request = { scenarioId: scenario.id, input: 'Who may not be enrolled, and are the records complete?' };
          if (streamed) {
            const turn = await server.stream('/api/agent/run/stream', token, request);
            conversationId = turn.body?.conversationId ?? undefined;
            const body = turn.body;
            const message = turn.ending !== 'result' ? body?.message : body.status === 'success' ? body.answer : body.error;
            return { status: streamedStatus(turn), message, watched: consolePreview(turn.watched, scenario.output.answerField), detail: turn.ending === 'result' ? body : undefined };
          }
          const response = await server.call('POST', '/api/agent/run', token, request);
          conversationId = response.body?.conversationId ?? undefined;
          const body = response.body;
          const message = response.status !== 200 ? body?.message : body.status === 'success' ? body.answer : body.error;
          return { status: response.status, message, detail: body };
        },
        async next() {
          const response = await server.call('POST', '/api/agent/run', token, { scenarioId: scenario.id, input: 'And the visit window?', ...(conversationId ? { conversationId } : {}) });
          return { status: response.status, message: response.body?.answer || response.body?.error || response.body?.message };
        },
        async invariant(fault, outcome) {
          const body = outcome.detail;
          if (outcome.status !== 200 || !body) return [];
          const problems: string[] = [];
          const outside = (body.toolCalls as Array<{ toolName: string; success: boolean }>).filter((call) => !scenario.tools.includes(call.toolName) && call.success);
          if (outside.length) problems.push(`a tool outside the scenario ran: ${outside[0]!.toolName}`);
          if (body.status !== 'success') return problems;
          if (validate && !validate(body.structuredOutput)) problems.push(`reported success with an answer not of its shape (${ajv.errorsText(validate.errors).slice(0, 100)})`);
          if (NEVER_AN_ANSWER.has(fault.id) || (schema && fault.unusable)) problems.push('reported success although no model answer was usable');
          return problems;
        },
      };
    },
  };
}
