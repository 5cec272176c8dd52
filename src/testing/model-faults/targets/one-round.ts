import { ClinAgentError } from '../../../core/errors.js';
import type { ReflexionRuleConfig } from '../../../runtime/staged/config.js';
import { PICO_STAGE } from '../../pico-stage.js';
import { reflect } from '../../../runtime/staged/reflexion.js';
import { conversationTurns } from '../../../core/db/schema/conversations.js';
import { selectReports, upsertReport } from '../../../memory/reports/report-queries.js';
import type { FaultTarget, TurnOutcome } from '../target.js';
import { nativeToolCall, reply } from './shapes.js';

/**
 * The one-round agents run inside other features: a staged agent's reflexion check, the summary history strategy,
 * the yearly roll-up of the history book. The cells call the same functions those features call, on the server's
 * context; what the person reads is what the feature shows (the check's note, the summary, the error of the job).
 */
async function asCall(work: () => Promise<string>): Promise<TurnOutcome> {
  try {
    return { status: 200, message: await work() };
  } catch (error) {
    // Our errors are written for the person reading them; anything else is a crash (a 5xx).
    if (ClinAgentError.isInstance(error)) return { status: 200, message: error.message, detail: { failed: error.code } };
    return { status: 500, message: error instanceof Error ? error.message : String(error), detail: { failed: 'crash' } };
  }
}

const VERDICT = { passed: false, issues: ['The population is not specific: give the age range and the diagnosis.'], suggestions: ['Adults aged 40-75 with stage 1 hypertension.'] };

const PICO = PICO_STAGE;

const SPECIFIC: ReflexionRuleConfig = {
  ruleId: 'population_specific',
  ruleName: 'population is specific',
  triggerTiming: 'on_complete',
  ruleType: 'prompt_based',
  severity: 'warning',
  failureAction: 'warn',
  priority: 100,
  message: 'The population is too vague',
};

/** A prompt-based reflexion rule: a model fault must never block the researcher; the check passes with a note. */
export const reflexionTarget: FaultTarget = {
  id: 'reflexion check',
  covers: ['staged_reflexion'],
  engines: ['pglite', 'postgres'],
  maxModelCalls: 1,
  turnLimitMs: 10_000,
  async setUp(server) {
    const { ctx } = server;
    const check = async () => {
      const trace = await ctx.trace.start({ kind: 'test', name: 'reflexion' });
      const result = await reflect({ rules: [SPECIFIC], timing: 'on_complete', stage: PICO, stageData: { population: 'adults' } }, { llm: ctx.llm, trace, agents: ctx.agents });
      await trace.finish({ status: 'success' });
      return result;
    };
    let last: Awaited<ReturnType<typeof reflect>> | undefined;
    return {
      healthy: () => reply(JSON.stringify(VERDICT)),
      sample: () => VERDICT,
      embedJson: (json) => reply(json),
      say: (text) => reply(JSON.stringify({ passed: false, issues: [text], suggestions: [] })),
      callTool: (name, args) => nativeToolCall(name, args),
      loopTool: { name: 'calculate_sample_size', arguments: {} },
      turn: () =>
        asCall(async () => {
          last = await check();
          const [checked] = last.checks;
          return checked?.message ?? (checked?.passed ? 'passed' : 'no check ran');
        }),
      async next() {
        const outcome = await asCall(async () => (await check()).checks[0]?.message ?? 'passed');
        return { status: outcome.status, message: outcome.message };
      },
      async invariant(fault) {
        const checked = last?.checks[0];
        if (!checked) return ['the reflexion check did not run'];
        // An unusable answer is no verdict: the stage is not blocked on it, and the note says it was not checked.
        if (fault.unusable && (!checked.passed || checked.severity !== 'info')) return [`an unusable answer judged the stage: ${JSON.stringify(checked)}`];
        return [];
      },
    };
  },
};

const SUMMARY = 'The user asked for the visit window of visit 2 (14 days after baseline) and the ECOG of S003 (1).';

/** The summary history strategy: the turns that fall out of the kept window are summarised before the next answer. */
export const conversationSummaryTarget: FaultTarget = {
  id: 'conversation summary',
  covers: ['conversation_summary'],
  engines: ['pglite', 'postgres'],
  maxModelCalls: 1,
  turnLimitMs: 10_000,
  async setUp(server) {
    const { ctx } = server;
    const { user } = await ctx.users.create({ name: 'faults-summary-user', role: 'coordinator' });
    const { id } = await ctx.conversations.start({ actor: user, title: 'visit windows' });
    let seq = 0;
    const add = async (text: string) => {
      // Written as they were said: two turns each time, so two fall out of the kept window before every history.
      await ctx.db.insert(conversationTurns).values([
        { conversationId: id, seq: ++seq, role: 'user', content: `${text} (${seq})` },
        { conversationId: id, seq: ++seq, role: 'assistant', content: `Noted: ${text}.` },
      ]);
    };
    const history = async () => {
      const messages = await ctx.conversations.history(id, { strategy: 'summary', keepTurns: 2 }, { actor: user });
      const summary = messages.find((message) => message.role === 'system');
      return typeof summary?.content === 'string' ? summary.content : 'no summary';
    };
    const stored = async () => JSON.stringify(await ctx.conversations.history(id, { strategy: 'sliding_window', maxTurns: 1000 }, { actor: user }));
    let before = '';
    return {
      healthy: () => reply(SUMMARY),
      sample: () => ({ summary: SUMMARY }),
      embedJson: (json) => reply(json),
      say: (text) => reply(text),
      callTool: (name, args) => nativeToolCall(name, args),
      loopTool: { name: 'get_project_stats', arguments: {} },
      async prepare() {
        await add('What is the visit window of visit 2?');
        await add('And the ECOG of S003?');
        before = await stored();
      },
      turn: () => asCall(history),
      async next() {
        await add('Thanks, that is all.');
        const outcome = await asCall(history);
        return { status: outcome.detail?.failed ? 500 : 200, message: outcome.message };
      },
      async invariant() {
        // Whatever the model did, the conversation log itself is never changed by summarising it.
        return (await stored()) === before ? [] : ['the conversation log changed while it was summarised'];
      },
    };
  },
};

const WEEKS_SHOWN = 50;
const YEARLY = 'In 2024 the team moved the DSMB meeting to March and enrolment reached 120 subjects.';

/** The yearly roll-up of the history book: weeks older than the window become one summary per year. */
export const yearlySummaryTarget: FaultTarget = {
  id: 'yearly summary',
  covers: ['memory_yearly_summary'],
  engines: ['pglite', 'postgres'],
  maxModelCalls: 1,
  turnLimitMs: 10_000,
  async setUp(server) {
    const { ctx } = server;
    const projectId = 'faults-yearly';
    await ctx.users.createProject({ id: projectId, name: projectId });
    // Weeks of 2024 beyond the window the history questions read, then the window itself (2025).
    const week = (day: Date, summary: string) =>
      upsertReport(ctx.db, { projectId, kind: 'week', periodStart: day.toISOString().slice(0, 10), label: day.toISOString().slice(0, 10), summary, tokens: 12, sourceCount: 3, generatedBy: 'faults' });
    const monday = (weeksAfter: number) => new Date(Date.UTC(2024, 0, 1 + 7 * weeksAfter));
    for (let i = 0; i < WEEKS_SHOWN + 4; i++) await week(monday(i), `Week ${i + 1}: screening went on.`);
    let edits = 0;
    const yearly = async () => (await selectReports(ctx.db, projectId, { kind: 'year', limit: 10 })).find((row) => row.label === '2024')?.summary;
    let previous: string | undefined;
    const rollUp = () => asCall(async () => ((await ctx.memory.reports.rollUpYears(projectId)).years.join(', ') || 'nothing to roll up') + `; 2024: ${(await yearly()) ?? 'none'}`);
    return {
      healthy: () => reply(YEARLY),
      sample: () => ({ summary: YEARLY }),
      embedJson: (json) => reply(json),
      say: (text) => reply(text),
      callTool: (name, args) => nativeToolCall(name, args),
      loopTool: { name: 'get_project_stats', arguments: {} },
      async prepare() {
        // A week of 2024 regenerated since the yearly summary was made leaves it out of date: the turn rebuilds it.
        await week(monday(0), `Week 1: screening went on (edit ${++edits}).`);
        await ctx.memory.reports.rollUpYears(projectId);
        previous = await yearly();
        await week(monday(1), `Week 2: screening went on (edit ${edits}).`);
      },
      turn: rollUp,
      async next() {
        await week(monday(2), `Week 3: screening went on (edit ${edits}).`);
        const outcome = await rollUp();
        return { status: outcome.detail?.failed ? 500 : 200, message: outcome.message };
      },
      async invariant(fault) {
        const now = await yearly();
        if (now === undefined) return ['the yearly summary of 2024 is gone'];
        return fault.unusable && now !== previous ? [`the yearly summary was replaced from an unusable answer: "${now.slice(0, 60)}"`] : [];
      },
    };
  },
};
