import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { User } from '../../core/auth/users.js';
import { conversationTurns } from '../../core/db/schema/conversations.js';
import { memoryReports } from '../../core/db/schema/memory.js';
import type { AgentRegistry } from '../../runtime/definitions/index.js';
import { startScriptedModel, type RecordedRequest, type ScriptedModel } from '../../testing/scripted-model.js';
import { buildTestContext } from '../../testing/test-context.js';
import { registryReplacing } from '../../testing/registry-variant.js';
import { testEngines } from '../../testing/test-database.js';
import { createMemoryReports } from './index.js';
import { WEEKLY_REPORT_AGENT, YEARLY_SUMMARY_AGENT } from './summarize.js';

const WEEKLY = 'The weekly report as the registry holds it.';
const YEARLY = 'The yearly summary as the registry holds it.';

const systemOf = (request: RecordedRequest) => (request.body.messages as Array<{ role: string; content: string }>).find((m) => m.role === 'system')!.content;

/** The report jobs run the weekly report and yearly summary the agent registry holds, which the memory deps hand them. */
describe.each(testEngines())('memory reports resolve their definitions from the agent registry on %s', (engine) => {
  let model: ScriptedModel;
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let owner: User;
  let agents: AgentRegistry;

  beforeAll(async () => {
    model = await startScriptedModel([], { fallback: { reply: 'The team discussed screening.' } });
    ctx = await buildTestContext({ engine, llmBaseUrl: model.baseURL });
    owner = (await ctx.users.create({ name: 'coordinator-report-registry', role: 'coordinator' })).user;
    // Both report definitions replaced: each with instructions of its own, so a request shows which one ran.
    agents = registryReplacing(ctx.tools, registryReplacing(ctx.tools, ctx.agents, WEEKLY_REPORT_AGENT, (definition) => ({ ...definition, instructions: WEEKLY })), YEARLY_SUMMARY_AGENT, (definition) => ({ ...definition, instructions: YEARLY }));
  });

  afterAll(async () => {
    await ctx?.close();
    await model?.close();
  });

  const reportsWith = (historyWeeks: number) => createMemoryReports({ db: ctx.db, llm: ctx.llm, agents, trace: ctx.trace, logger: ctx.logger, users: ctx.users, conversations: ctx.conversations, config: { hotMaxTokens: 2000, historyWeeks } });

  it("a week's report is written with the registered weekly report's instructions", async () => {
    await ctx.users.createProject({ id: 'registry-week', name: 'registry-week' });
    await ctx.users.addMember('registry-week', owner.id);
    const { id } = await ctx.conversations.start({ actor: owner, projectId: 'registry-week', title: 'log' });
    await ctx.db.insert(conversationTurns).values({ conversationId: id, seq: 1, role: 'user', content: 'Why did we pause screening?', createdAt: new Date('2026-11-16T09:00:00Z') });
    const before = model.requests.length;
    const { stored } = await reportsWith(50).regenerate(owner, 'registry-week', '2026-11-16');
    expect(stored).toBe(true);
    expect(systemOf(model.requests[before]!)).toContain(WEEKLY);
  });

  it("a year's roll-up is written with the registered yearly summary's instructions", async () => {
    await ctx.users.createProject({ id: 'registry-year', name: 'registry-year' });
    const week = (periodStart: string, label: string) => ({ projectId: 'registry-year', kind: 'week' as const, periodStart, label, summary: `summary of ${label}`, tokens: 5, sourceCount: 3, generatedBy: 'test' });
    await ctx.db.insert(memoryReports).values([week('2025-03-03', '2025-W10'), week('2025-03-10', '2025-W11'), week('2026-03-02', '2026-W10')]);
    const before = model.requests.length;
    const { years } = await reportsWith(1).rollUpYears('registry-year');
    expect(years).toEqual(['2025']);
    expect(systemOf(model.requests[before]!)).toContain(YEARLY);
  });
});
