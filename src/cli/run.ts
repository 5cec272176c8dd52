import { parseArgs } from 'node:util';
import { ingestScenarioDocuments } from '../runtime/scenarios/ingest-documents.js';
import { resolveScenario } from '../runtime/scenarios/resolve-scenario.js';
import { closeContext, createContext } from '../context.js';
import { DIFY_INPUT_LIMITS, DifyInputValue, DifyVariableName } from '../contract/agent.js';
import { loadConfig } from '../core/config.js';
import { ClinAgentError, formatIssues } from '../core/errors.js';
import { createLogger } from '../core/logger.js';

const USAGE = 'Usage: clinagent run <scenarioId> "<input>" [--input name=value ...] [--inputs \'{"name": value}\'], e.g. clinagent run protocol-qa "What are the inclusion criteria?"';

export async function runCommand(args: string[]): Promise<number> {
  const { positionals, values } = parseArgs({ args, allowPositionals: true, options: { input: { type: 'string', multiple: true }, inputs: { type: 'string' } } });
  const [scenarioId, ...words] = positionals;
  const input = words.join(' ');
  if (!scenarioId || !input.trim()) throw new ClinAgentError('VALIDATION_FAILED', USAGE);
  const inputs = startFormInputs(values.input ?? [], values.inputs);
  const config = loadConfig();
  // stdout carries the AgentResult JSON alone (so `clinagent run ... | jq` works); log lines go to stderr. A failed
  // run is said once, in words, on stderr: the run's own log lines (JSON) only at LOG_LEVEL=debug, where they are
  // asked for, while start-up keeps its level (the audit key's first-start warning must be seen).
  const ctx = await createContext(config, { logger: createLogger(config.logLevel, process.stderr) });
  const verbose = config.logLevel === 'debug' || config.logLevel === 'trace';
  const runLogger = verbose ? ctx.logger : ctx.logger.child({}, { level: 'error' });
  try {
    // The definition the registry holds, as every run resolves it; the catalog names an invalid file's problems.
    const scenario = resolveScenario(ctx, scenarioId);
    // A Dify scenario whose key variable is unset stops here, naming it, before anything is ingested or called.
    ctx.engines.assertReady(scenario, { inputs });
    // The shipped documents must be there for references; unchanged files are skipped by hash.
    if (ctx.hasVectorStore) await ingestScenarioDocuments(ctx.rag, scenario);
    const result = await ctx.engines.run(scenario, input, { context: { llm: ctx.llm, tools: ctx.tools, trace: ctx.trace, rag: ctx.rag, logger: runLogger }, inputs });
    process.stdout.write(JSON.stringify(result, null, 2) + '\n');
    if (result.status !== 'success') process.stderr.write(`clinagent run: the run ${result.status === 'cancelled' ? 'was cancelled' : 'failed'}: ${result.error} (trace ${result.traceId})\n`);
    return result.status === 'success' ? 0 : 1;
  } finally {
    await closeContext(ctx);
  }
}

/**
 * A Dify app's start-form values from the command line: each `--input name=value` is text (what a form field
 * holds), `--inputs` a JSON object for numbers and true/false; `--input` wins over `--inputs` for the same name.
 */
function startFormInputs(pairs: string[], json: string | undefined): Record<string, string | number | boolean> | undefined {
  if (!pairs.length && json === undefined) return undefined;
  let raw: Record<string, unknown> = {};
  if (json !== undefined) {
    try {
      raw = JSON.parse(json) as Record<string, unknown>;
    } catch (error) {
      throw new ClinAgentError('VALIDATION_FAILED', `--inputs: not JSON (${(error as Error).message}); give an object, e.g. --inputs '{"visit": 2, "fasting": true}'`, { field: 'inputs' });
    }
  }
  for (const pair of pairs) {
    const equals = pair.indexOf('=');
    if (equals <= 0) throw new ClinAgentError('VALIDATION_FAILED', `--input ${pair}: write name=value, e.g. --input site=S01`, { field: 'inputs' });
    raw = { ...raw, [pair.slice(0, equals)]: pair.slice(equals + 1) };
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new ClinAgentError('VALIDATION_FAILED', `--inputs: give a JSON object, e.g. --inputs '{"visit": 2}'`, { field: 'inputs' });
  // The checks of the API's `inputs` (src/contract/agent.ts), with a line per problem.
  const problems = Object.entries(raw).flatMap(([name, value]) => [
    ...formatIssues(DifyVariableName.safeParse(name).error?.issues ?? []).map((line) => `inputs.${name}: ${line.replace(/^\(root\): /, '')}`),
    ...formatIssues(DifyInputValue.safeParse(value).error?.issues ?? []).map((line) => `inputs.${name}: ${line.replace(/^\(root\): /, '')}`),
  ]);
  if (Object.keys(raw).length > DIFY_INPUT_LIMITS.variables) problems.push(`inputs: at most ${DIFY_INPUT_LIMITS.variables} variables`);
  if (problems.length) throw new ClinAgentError('VALIDATION_FAILED', `Invalid inputs:\n- ${problems.join('\n- ')}`, { field: 'inputs', problems });
  return raw as Record<string, string | number | boolean>;
}
