import { pathToFileURL } from 'node:url';
import { memoryReports } from '../src/core/db/schema/memory.js';
import { isoWeekLabel } from '../src/memory/reports/index.js';
import { countTokens } from '../src/core/tokenizer.js';
import { buildServer } from '../src/http/server.js';
import { startScriptedModel, type RecordedRequest } from '../src/testing/scripted-model.js';
import { buildTestContext } from '../src/testing/test-context.js';
import { ensureDemoTrial } from '../src/trial/demo/load-demo-trial.js';
import { createTrialStore } from '../src/trial/store/trial-store.js';
import { printTable } from './stats.js';

/**
 * Prompt tokens per assistant turn (seed 002: "偏好时刻带，历史按需查"): a project with 100 weeks of reports and
 * hot memory filled to its cap, asked a data question and a history question. What each prompt holds is counted
 * with the shared tokenizer on the messages the model server received, per model call and per turn.
 */
const WEEKS = 100;

/** A realistic weekly summary: some 120 tokens of decisions, problems and progress. */
function weeklySummary(week: number): string {
  return `Week ${week}: enrolled ${3 + (week % 4)} subjects (total ${40 + week * 3}); ${week % 3} new queries on visit windows at SITE-0${1 + (week % 3)}. Decision: ${week % 5 === 0 ? 'added a transport allowance to speed enrolment' : 'kept screening criteria unchanged'}. Lesson: ${week % 2 ? 'remind sites to enter V2 blood pressure within 3 days' : 'check consent dates before randomisation'}. Open issue: ${week % 4 ? 'two AE terms need MedDRA coding' : 'none'}.`;
}

function mondayOf(weekIndex: number): string {
  const start = Date.UTC(2024, 11, 30); // a Monday; 100 weeks end in late 2026
  return new Date(start + weekIndex * 7 * 86_400_000).toISOString().slice(0, 10);
}

export async function main(): Promise<void> {
  const isRouting = (r: RecordedRequest) => Boolean(r.body.response_format);
  let questionType = 'data_question';
  const model = await startScriptedModel([], {
    respond: (request) => {
      if (isRouting(request)) return { reply: JSON.stringify({ intents: [{ type: questionType, text: 'question' }] }) };
      // The yearly roll-up: no tools, no JSON mode.
      if (!request.body.tools) return { reply: 'Year summary: enrolment rose steadily to plan; a transport allowance was added to speed it; sites were reminded to enter V2 blood pressure within 3 days; AE coding backlog cleared by year end.' };
      const tools = (request.body.messages as Array<{ role: string }>).filter((m) => m.role === 'tool').length;
      if (questionType === 'data_question' && tools === 0) return { toolCalls: [{ name: 'read_clinical_data', arguments: { record_id: 'S001' } }] };
      return { reply: 'Answer.' };
    },
  });
  const ctx = await buildTestContext({ llmBaseUrl: model.baseURL, engine: 'pglite' });
  const app = await buildServer(ctx, { serveConsole: false });
  try {
    const { token, user } = await ctx.users.create({ name: 'bench-pi', role: 'pi' });
    await ensureDemoTrial(createTrialStore(ctx.db), 'system');
    await ctx.users.addMember('demo-htn-01', user.id);
    await ctx.db.insert(memoryReports).values(
      Array.from({ length: WEEKS }, (_, i) => {
        const summary = weeklySummary(i + 1);
        const start = mondayOf(i);
        return { projectId: 'demo-htn-01', kind: 'week' as const, periodStart: start, label: isoWeekLabel(new Date(`${start}T00:00:00Z`)), summary, tokens: countTokens(summary), sourceCount: 20, generatedBy: 'bench' };
      }),
    );
    // Weeks older than the newest 50 are read as yearly summaries, as the weekly job leaves them.
    await ctx.memory.reports.rollUpYears('demo-htn-01');
    // Hot memory filled up to its cap, one fact at a time as chat would.
    const cap = ctx.config.memory.hotMaxTokens;
    for (let i = 0; ; i++) {
      const sections = ['preferences', 'state', 'prohibitions'] as const;
      const fact = { section: sections[i % 3]!, text: `Fact ${i}: the PI wants site ${i % 7} enrolment reported weekly with numbers only, never narrative.`, source: { kind: 'user' as const, ref: 'bench' } };
      try {
        await ctx.memory.hot.addFacts(user, 'demo-htn-01', [fact], 'api');
      } catch {
        break; // the next fact would pass the cap: memory is full
      }
    }
    const memory = await ctx.memory.hot.get(user, 'demo-htn-01');

    const rows: Array<Record<string, string | number>> = [];
    for (const [label, type, message] of [
      ['data question ("S001 baseline BP?")', 'data_question', 'What was S001 baseline blood pressure?'],
      ['history question ("why the allowance?")', 'history_question', 'Why did we add a transport allowance?'],
    ] as const) {
      questionType = type;
      model.requests.length = 0;
      const response = await app.inject({ method: 'POST', url: '/api/iit/projects/demo-htn-01/chat', headers: { authorization: `Bearer ${token}` }, payload: { message } });
      if (response.statusCode !== 200) throw new Error(`chat answered ${response.statusCode}: ${response.body}`);
      const calls = model.requests.filter((r) => !isRouting(r));
      const perCall = calls.map((r) => countTokens(JSON.stringify(r.body.messages)));
      const routing = model.requests.filter(isRouting).map((r) => countTokens(JSON.stringify(r.body.messages)));
      const routingTokens = routing.reduce((a, b) => a + b, 0);
      rows.push({ turn: label, 'routing prompt': routingTokens, 'answer calls': calls.length, 'first answer prompt': perCall[0] ?? 0, 'whole turn (all prompts)': perCall.reduce((a, b) => a + b, 0) + routingTokens });
    }
    printTable(`Assistant prompt tokens per turn: ${WEEKS} weekly reports stored (history loads at most ${ctx.config.memory.historyWeeks}), hot memory ${memory.tokens}/${cap} tokens`, rows);
    const first = (row: Record<string, string | number>) => Number(row['first answer prompt']);
    const history = await ctx.memory.reports.promptBlock('demo-htn-01');
    const everyWeek = Array.from({ length: WEEKS }, (_, i) => weeklySummary(i + 1)).join('\n');
    console.log(`history block: ${countTokens(history)} tokens (newest ${ctx.config.memory.historyWeeks} weeks and a yearly summary of the older ones; all ${WEEKS} weekly summaries would be ${countTokens(everyWeek)})`);
    console.log(`history question / data question, first answer prompt: ${(first(rows[1]!) / first(rows[0]!)).toFixed(2)}x`);
  } finally {
    await app.close();
    await ctx.close();
    await model.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
