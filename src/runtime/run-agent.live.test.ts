import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestScenarioDocuments } from './scenarios/ingest-documents.js';
import { loadScenario } from './scenarios/load.js';
import { runAgent, type AgentDeps } from './run-agent.js';
import { buildTestContext } from '../testing/test-context.js';

/**
 * `npm run test:live`: the shipped scenarios against a real OpenAI-compatible endpoint. Assertions are about
 * behaviour a real model must show (cites the protocol, calls the tools), not exact words.
 */
describe('live: shipped scenarios against a real endpoint', () => {
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let deps: AgentDeps;

  beforeAll(async () => {
    if (!process.env.LLM_BASE_URL || !process.env.LLM_MODEL) {
      throw new Error('The live suite needs LLM_BASE_URL and LLM_MODEL (and LLM_API_KEY if the endpoint needs one).');
    }
    ctx = await buildTestContext({
      engine: 'pglite',
      env: {
        LLM_BASE_URL: process.env.LLM_BASE_URL,
        LLM_MODEL: process.env.LLM_MODEL,
        LLM_API_KEY: process.env.LLM_API_KEY,
        LLM_TIMEOUT_MS: process.env.LLM_TIMEOUT_MS ?? '120000',
        EMBEDDING_MODEL: process.env.EMBEDDING_MODEL,
        EMBEDDING_BASE_URL: process.env.EMBEDDING_BASE_URL,
        EMBEDDING_API_KEY: process.env.EMBEDDING_API_KEY,
      },
    });
    deps = { llm: ctx.llm, tools: ctx.tools, trace: ctx.trace, rag: ctx.rag };
  });

  afterAll(async () => {
    await ctx?.close();
  });

  it('answers a protocol question from the protocol, with references', async () => {
    const scenario = loadScenario(path.join(process.cwd(), 'scenarios', 'protocol-qa.yaml'));
    await ingestScenarioDocuments(ctx.rag, scenario);
    const result = await runAgent(scenario, '入选标准中的年龄范围是多少？', { context: deps });
    expect(result.status, result.error).toBe('success');
    expect(result.references.length).toBeGreaterThan(0);
    expect(result.answer).toMatch(/18/);
    expect(result.answer).toMatch(/75/);
  });

  it('checks data completeness by calling the built-in tools', async () => {
    const scenario = loadScenario(path.join(process.cwd(), 'scenarios', 'data-completeness.yaml'));
    const result = await runAgent(scenario, 'Check the required fields for all subjects and list the gaps.', { context: deps });
    expect(result.status, result.error).toBe('success');
    expect(result.toolCalls.some((c) => c.toolName === 'check_required_fields' && c.success)).toBe(true);
    expect(JSON.stringify(result.structuredOutput)).toMatch(/S004/);
  });
});
