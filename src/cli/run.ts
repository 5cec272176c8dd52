import { ingestScenarioDocuments } from '../agent/scenarios/ingest-documents.js';
import { closeContext, createContext } from '../context.js';
import { loadConfig } from '../core/config.js';
import { ClinAgentError } from '../core/errors.js';
import { createLogger } from '../core/logger.js';

export async function runCommand(args: string[]): Promise<number> {
  const [scenarioId, ...words] = args;
  const input = words.join(' ');
  if (!scenarioId || !input.trim()) {
    throw new ClinAgentError('VALIDATION_FAILED', 'Usage: clinagent run <scenarioId> "<input>", e.g. clinagent run protocol-qa "What are the inclusion criteria?"');
  }
  const config = loadConfig();
  // stdout carries the AgentResult JSON alone (so `clinagent run ... | jq` works); log lines go to stderr.
  const ctx = await createContext(config, { logger: createLogger(config.logLevel, process.stderr) });
  try {
    const scenario = ctx.scenarios.get(scenarioId);
    // A Dify scenario whose key variable is unset stops here, naming it, before anything is ingested or called.
    ctx.engines.assertReady(scenario);
    // The shipped documents must be there for references; unchanged files are skipped by hash.
    if (ctx.hasVectorStore) await ingestScenarioDocuments(ctx.rag, scenario);
    const result = await ctx.engines.run(scenario, input, { context: { llm: ctx.llm, tools: ctx.tools, trace: ctx.trace, rag: ctx.rag, logger: ctx.logger } });
    process.stdout.write(JSON.stringify(result, null, 2) + '\n');
    return result.status === 'success' ? 0 : 1;
  } finally {
    await closeContext(ctx);
  }
}
