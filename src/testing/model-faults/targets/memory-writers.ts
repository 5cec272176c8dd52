import { ClinAgentError } from '../../../core/errors.js';
import { makeLine } from '../../../memory/hot/lines.js';
import { selectMemory } from '../../../memory/hot/memory-queries.js';
import type { FaultServer } from '../fault-server.js';
import type { FaultTarget, TurnOutcome } from '../target.js';
import { nativeToolCall, reply } from './shapes.js';

/**
 * The memory writers run as jobs, not as requests: the cells call the same service functions the job handlers
 * call (ctx.memory.hot.distill and .prune), on the server's context. The person is the admin: what they read is
 * the error the failed job records, or the memory editor (its content, or the overflow notice when pruning could
 * not make the memory fit).
 */
async function asJob(work: () => Promise<unknown>, view: () => Promise<{ content: string; overflow: { at: string; message: string } | null }>, since: number): Promise<TurnOutcome> {
  try {
    await work();
  } catch (error) {
    // Our errors are written for the admin reading the failed job; anything else is a crash (a 5xx of a job).
    if (ClinAgentError.isInstance(error)) return { status: 200, message: error.message, detail: { failed: error.code } };
    return { status: 500, message: error instanceof Error ? error.message : String(error), detail: { failed: 'crash' } };
  }
  const shown = await view();
  const notice = shown.overflow && Date.parse(shown.overflow.at) >= since ? shown.overflow.message : undefined;
  return { status: 200, message: notice ?? shown.content, detail: { notice } };
}

async function memoryProject(server: FaultServer, projectId: string) {
  const { ctx } = server;
  const coordinator = await ctx.users.create({ name: `${projectId}-coordinator`, role: 'coordinator' });
  await ctx.users.createProject({ id: projectId, name: projectId });
  await ctx.users.addMember(projectId, coordinator.user.id);
  const view = () => ctx.memory.hot.get(coordinator.user, projectId);
  return { ...coordinator, projectId, view };
}

const FACTS = { facts: [{ section: 'state', text: 'Screening logs are kept in the shared template.', source: 'T1' }] };

/** The daily distillation of the conversation log into hot memory. */
export const distillTarget: FaultTarget = {
  id: 'memory distiller',
  covers: ['memory_distill'],
  engines: ['pglite', 'postgres'],
  maxModelCalls: 2,
  turnLimitMs: 10_000,
  async setUp(server) {
    const { ctx } = server;
    const project = await memoryProject(server, 'faults-distill');
    await server.call('POST', `/api/iit/projects/${project.projectId}/memory/facts`, project.token, { facts: [{ section: 'preferences', text: 'Answer in English.' }] });
    const { id: conversationId } = await ctx.conversations.start({ actor: project.user, projectId: project.projectId, title: 'logs' });
    let before: { lines: string; watermark: number } = { lines: '', watermark: 0 };
    const snapshot = async () => {
      const row = await selectMemory(ctx.db, project.projectId);
      return { lines: JSON.stringify((row?.lines ?? []).map((l) => [l.section, l.text])), watermark: row?.distilledThroughTurnId ?? 0 };
    };
    const say = (text: string) => ctx.conversations.append(conversationId, [{ role: 'user', content: text }], project.user);
    let started = 0;
    return {
      healthy: () => reply(JSON.stringify(FACTS)),
      sample: () => FACTS,
      embedJson: (json) => reply(json),
      say: (text) => reply(JSON.stringify({ facts: [{ section: 'state', text, source: 'T1' }] })),
      callTool: (name, args) => nativeToolCall(name, args),
      loopTool: { name: 'get_project_stats', arguments: {} },
      async prepare() {
        await say('We keep screening logs in the shared template from now on.');
        before = await snapshot();
        started = Date.now();
      },
      turn: () => asJob(() => ctx.memory.hot.distill(project.projectId), project.view, started),
      async next() {
        await say('Visit 2 is due within 14 days of baseline.');
        const outcome = await asJob(() => ctx.memory.hot.distill(project.projectId), project.view, Date.now());
        return { status: outcome.detail?.failed ? 500 : 200, message: outcome.message };
      },
      async invariant(fault) {
        const after = await snapshot();
        const view = await project.view();
        const problems: string[] = [];
        if (view.tokens > view.maxTokens) problems.push(`hot memory is ${view.tokens} tokens, over its cap of ${view.maxTokens}`);
        if (fault.unusable) {
          if (after.lines !== before.lines) problems.push('hot memory changed from an unusable answer');
          if (after.watermark !== before.watermark) problems.push('the watermark moved past turns no usable answer read');
        }
        return problems;
      },
    };
  },
};

/** Hot memory is written near its cap (MEMORY_HOT_MAX_TOKENS of the suite) so every cell's pending line needs pruning. */
const PROHIBITION = 'Never contact subjects directly; go through the site coordinator.';
const MEMORY_NEAR_CAP = [
  '## Preferences',
  '- Answer in English, briefly.',
  '## Current state',
  ...Array.from({ length: 14 }, (_, i) => `- Site ${i + 1} screened ${i + 3} patients this month and enrolled ${i + 1} of them.`),
  '## Prohibitions',
  `- ${PROHIBITION}`,
].join('\n');
const PENDING = 'Site 13 opened this week and its coordinator asked for the visit window table, the screening log template and the ECOG training slides before the first patient.';

/** Pruning: the model condenses hot memory that went over its cap; when it cannot, the admin gets a notice. */
export const pruneTarget: FaultTarget = {
  id: 'memory pruner',
  covers: ['memory_prune'],
  engines: ['pglite', 'postgres'],
  // PRUNE_DEFINITION.stop.attempts.
  maxModelCalls: 2,
  turnLimitMs: 10_000,
  async setUp(server) {
    const { ctx } = server;
    const project = await memoryProject(server, 'faults-prune');
    const condensed = { lines: [{ section: 'preferences', text: 'Answer in English, briefly.', from: [1] }, { section: 'state', text: 'Sites 1-14 are screening and enrolling.', from: [2] }, { section: 'prohibitions', text: PROHIBITION, from: [17] }] };
    let before = '';
    let started = 0;
    return {
      healthy: () => reply(JSON.stringify(condensed)),
      sample: () => condensed,
      embedJson: (json) => reply(json),
      say: (text) => reply(JSON.stringify({ lines: [...condensed.lines, { section: 'state', text, from: [] }] })),
      callTool: (name, args) => nativeToolCall(name, args),
      loopTool: { name: 'get_project_stats', arguments: {} },
      async prepare() {
        const written = await server.call('PUT', `/api/iit/projects/${project.projectId}/memory`, project.token, { content: MEMORY_NEAR_CAP, reason: 'fault suite' });
        if (written.status !== 200) throw new Error(`hot memory could not be written near its cap: ${JSON.stringify(written.body).slice(0, 200)}`);
        before = (await project.view()).content;
        started = Date.now();
      },
      turn: () => asJob(() => ctx.memory.hot.prune(project.projectId, { pendingLines: [makeLine('state', PENDING, { kind: 'user', ref: 'faults' }, 'faults')] }), project.view, started),
      async next() {
        await server.call('PUT', `/api/iit/projects/${project.projectId}/memory`, project.token, { content: MEMORY_NEAR_CAP, reason: 'fault suite' });
        const outcome = await asJob(() => ctx.memory.hot.prune(project.projectId, { pendingLines: [makeLine('state', PENDING, { kind: 'user', ref: 'faults' }, 'faults')] }), project.view, Date.now());
        return { status: outcome.detail?.failed ? 500 : 200, message: outcome.message };
      },
      async invariant(fault, outcome) {
        const view = await project.view();
        const problems: string[] = [];
        if (view.tokens > view.maxTokens) problems.push(`hot memory is ${view.tokens} tokens, over its cap of ${view.maxTokens}`);
        if (!view.lines.some((l) => l.section === 'prohibitions')) problems.push('the prohibitions were dropped');
        if (fault.unusable) {
          if (view.content !== before) problems.push('hot memory changed from an unusable answer');
          if (!outcome.detail?.notice && !outcome.detail?.failed) problems.push('the admin was not told that the memory could not be pruned');
        }
        return problems;
      },
    };
  },
};
