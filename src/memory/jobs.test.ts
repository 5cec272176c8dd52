import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { User } from '../core/auth/users.js';
import { conversationTurns } from '../core/db/schema/conversations.js';
import { memoryReports } from '../core/db/schema/memory.js';
import { ClinAgentError } from '../core/errors.js';
import { startScriptedModel, type ScriptedModel } from '../testing/scripted-model.js';
import { buildTestContext } from '../testing/test-context.js';
import { testEngines } from '../testing/test-database.js';
import { waitFor } from '../testing/wait-for.js';
import { memoryDistillAllQueue, memoryWeeklyAllQueue, registerMemoryWorkers } from './jobs.js';
import { createMemoryReports, WEEKLY_JOB_ACTOR } from './reports/index.js';
import { addWeeks, isoWeekLabel, mondayOf } from './reports/iso-week.js';
import type { HotMemoryService } from './types.js';

const DISTILL_CRON = '0 2 * * *';
const WEEKLY_CRON = '0 3 * * 1';

/**
 * Hot memory is another unit (src/memory/hot); here only its job entry points are called, so a recording stand-in
 * for that interface shows which projects the jobs handed it. Everything else (queues, workers, reports) is real.
 */
function recordingHotMemory(projectsToDistill: string[]) {
  const distilled: string[] = [];
  const notHere = () => Promise.reject(new ClinAgentError('INTERNAL', 'not used by the memory jobs'));
  const hot: HotMemoryService = {
    get: notHere,
    versions: notHere,
    replace: notHere,
    addFacts: notHere,
    rollback: notHere,
    promptBlock: notHere,
    async distill(projectId) {
      distilled.push(projectId);
      return { changed: true, facts: 1, turns: 2, feedback: 0, refused: 0 };
    },
    prune: notHere,
    async projectsToDistill() {
      return projectsToDistill;
    },
  };
  return { hot, distilled };
}

describe.each(testEngines())('memory jobs on %s', (engine) => {
  let model: ScriptedModel;
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let owner: User;
  const hot = recordingHotMemory(['jobs-talked', 'jobs-other']);

  beforeAll(async () => {
    model = await startScriptedModel([], { fallback: { reply: 'The team agreed to add a second CRC for screening.' } });
    ctx = await buildTestContext({ engine, llmBaseUrl: model.baseURL, startJobs: true });
    owner = (await ctx.users.create({ name: 'coordinator-jobs', role: 'coordinator' })).user;
    for (const id of ['jobs-talked', 'jobs-silent']) {
      await ctx.users.createProject({ id, name: id });
      await ctx.users.addMember(id, owner.id);
    }
    const reports = createMemoryReports({ db: ctx.db, llm: ctx.llm, trace: ctx.trace, logger: ctx.logger, users: ctx.users, conversations: ctx.conversations, agents: ctx.agents, config: { hotMaxTokens: 2000, historyWeeks: 50 } });
    await registerMemoryWorkers({ jobs: ctx.jobs!, hot: hot.hot, reports, logger: ctx.logger, cron: { distill: DISTILL_CRON, weekly: WEEKLY_CRON } });
  });

  afterAll(async () => {
    await ctx?.close();
    await model?.close();
  });

  it('schedules the daily distillation and the weekly reports', async () => {
    const schedules = await ctx.jobs!.schedules();

    expect(schedules).toEqual(
      expect.arrayContaining([
        { queue: memoryDistillAllQueue.name, cron: DISTILL_CRON, data: {}, tz: 'UTC' },
        { queue: memoryWeeklyAllQueue.name, cron: WEEKLY_CRON, data: {}, tz: 'UTC' },
      ]),
    );
  });

  it("writes last week's report for each project with conversation when the weekly fan-out runs", async () => {
    const lastMonday = addWeeks(mondayOf(new Date()), -1);
    const { id } = await ctx.conversations.start({ actor: owner, projectId: 'jobs-talked', title: 'screening' });
    await ctx.db.insert(conversationTurns).values([
      { conversationId: id, seq: 1, role: 'user', content: 'Screening is slow; should we add a CRC?', createdAt: new Date(lastMonday.getTime() + 33 * 3600_000) },
      { conversationId: id, seq: 2, role: 'assistant', content: 'Adding a CRC at the outpatient clinic helped before.', createdAt: new Date(lastMonday.getTime() + 34 * 3600_000) },
    ]);
    await ctx.conversations.start({ actor: owner, projectId: 'jobs-silent', title: 'no turns' });

    await ctx.jobs!.send(memoryWeeklyAllQueue, {});

    const [report] = await waitFor(async () => {
      const rows = await ctx.db.select().from(memoryReports).where(eq(memoryReports.projectId, 'jobs-talked'));
      return rows.length ? rows : undefined;
    }, "last week's report of jobs-talked");
    expect(report).toMatchObject({ kind: 'week', label: isoWeekLabel(lastMonday), summary: 'The team agreed to add a second CRC for screening.', sourceCount: 2, generatedBy: WEEKLY_JOB_ACTOR });
    const prompts = model.requests.map((r) => JSON.stringify(r.body.messages));
    expect(prompts.some((p) => p.includes('Screening is slow'))).toBe(true);
    expect(await ctx.db.select().from(memoryReports).where(eq(memoryReports.projectId, 'jobs-silent'))).toEqual([]);
  });

  it('hands each project to distillation when the daily fan-out runs', async () => {
    await ctx.jobs!.send(memoryDistillAllQueue, {});

    await waitFor(async () => hot.distilled.length >= 2, 'distillation of both projects');
    expect([...hot.distilled].sort()).toEqual(['jobs-other', 'jobs-talked']);
  });
});
