import { conversationTurns } from '../../../core/db/schema/conversations.js';
import { formatDay, mondayOf } from '../../../memory/reports/iso-week.js';
import type { FaultTarget } from '../target.js';
import { nativeToolCall, reply } from './shapes.js';

const GOOD = 'The team agreed to keep screening logs in the shared template and to check ECOG at every visit.';

/**
 * The weekly report (POST /api/iit/projects/:projectId/reports/regenerate, as the console asks for this week so
 * far). A regeneration whose model answer is unusable keeps the report that was there; a usable one replaces it.
 */
/** What the person reads: the new report when it was stored, else the notice saying why not and what stands. */
function personMessage(response: { status: number; body: any }): unknown {
  if (response.status !== 200) return response.body?.message;
  return response.body.stored ? response.body.report?.summary : response.body.notice;
}

export const weeklyReportTarget: FaultTarget = {
  id: 'weekly report',
  covers: ['memory_weekly_report'],
  engines: ['pglite', 'postgres'],
  maxModelCalls: 3,
  turnLimitMs: 10_000,
  async setUp(server) {
    const { ctx } = server;
    const { user, token } = await ctx.users.create({ name: 'faults-report-coordinator', role: 'coordinator' });
    const projectId = 'faults-report';
    await ctx.users.createProject({ id: projectId, name: projectId });
    await ctx.users.addMember(projectId, user.id);
    const { id } = await ctx.conversations.start({ actor: user, projectId, title: 'screening logs' });
    const now = new Date();
    // Within this week even when the suite runs in its first second.
    const createdAt = new Date(Math.max(mondayOf(now).getTime(), now.getTime() - 1000));
    await ctx.db.insert(conversationTurns).values({ conversationId: id, seq: 1, role: 'user', content: 'How do we keep screening logs?', createdAt });
    const weekStart = formatDay(mondayOf(now));
    const regenerate = () => server.call('POST', `/api/iit/projects/${projectId}/reports/regenerate`, token, { weekStart });
    const stored = async () => ((await server.call('GET', `/api/iit/projects/${projectId}/reports?kind=week`, token)).body.reports as Array<{ periodStart: string; summary: string }>).find((r) => r.periodStart === weekStart)?.summary;
    let previous: string | undefined;
    return {
      healthy: () => reply(GOOD),
      sample: () => ({ summary: GOOD, highlights: ['screening logs'], open_questions: [] }),
      embedJson: (json) => reply(json),
      say: (text) => reply(text),
      callTool: (name, args) => nativeToolCall(name, args),
      loopTool: { name: 'get_project_stats', arguments: {} },
      async prepare() {
        const made = await regenerate();
        if (made.status !== 200 || !made.body.stored) throw new Error(`the healthy report could not be made: ${JSON.stringify(made.body)}`);
        previous = await stored();
      },
      async turn() {
        const response = await regenerate();
        return { status: response.status, message: personMessage(response), detail: response.body };
      },
      async next() {
        const response = await regenerate();
        return { status: response.status, message: personMessage(response) };
      },
      async invariant(fault) {
        const now = await stored();
        if (now === undefined) return ['the report of the week is gone'];
        return fault.unusable && now !== previous ? [`the previous report was replaced by "${now.slice(0, 60)}"`] : [];
      },
    };
  },
};
