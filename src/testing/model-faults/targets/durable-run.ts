import { INTAKE_ASK, INTAKE_QUESTION, INTAKE_RESPOND } from '../../intake-agent.js';
import { waitFor } from '../../wait-for.js';
import { WAITING_SCENARIO_ID } from '../fault-server.js';
import type { FaultTarget } from '../target.js';
import { nativeToolCall, promptOf, reply } from './shapes.js';

/** The test-intake agent's system prompt (INTAKE_SCENARIO): what tells its model calls from other targets'. */
const INTAKE_INSTRUCTIONS = 'Ask the patient how long the symptom has lasted';

const ANSWER = 'three weeks';
const SETTLED = new Set(['SUSPENDED', 'COMPLETED', 'FAILED', 'CANCELLED']);

/**
 * A durable run that waits for a person (POST /api/agent/runs, then /answer): the run asks, the person answers,
 * and the fault answers the resumed turn. The person's answer is kept, the run settles (no run left RUNNING), and a
 * run is never COMPLETED from an answer that was not usable.
 */
export const durableRunTarget: FaultTarget = {
  id: 'durable run (waits for a person)',
  covers: [WAITING_SCENARIO_ID],
  engines: ['pglite', 'postgres'],
  maxModelCalls: 6,
  turnLimitMs: 15_000,
  async setUp(server) {
    const { token } = await server.ctx.users.create({ name: 'faults-durable', role: 'coordinator' });
    let asking = false;
    let runId = '';
    let dataHash = '';
    const runOf = async (id: string) => (await server.call('GET', `/api/agent/runs/${id}`, token)).body;
    const settle = (id: string) => waitFor(async () => {
      const run = await runOf(id);
      return SETTLED.has(run.status) ? run : undefined;
    }, 'the run to settle', 15_000, 50);
    return {
      owns: (request) => promptOf(request).includes(INTAKE_INSTRUCTIONS),
      healthy: () => reply(asking ? INTAKE_ASK : INTAKE_RESPOND),
      sample: () => JSON.parse(INTAKE_RESPOND),
      embedJson: (json) => reply(json),
      say: (text) => reply(JSON.stringify({ action: 'respond', answer: text })),
      callTool: (name, args) => nativeToolCall(name, args),
      loopTool: { name: 'query_demo_records', arguments: {} },
      async prepare() {
        asking = true;
        try {
          const started = await server.call('POST', '/api/agent/runs', token, { scenarioId: WAITING_SCENARIO_ID, input: 'I have a cough.' });
          if (started.status !== 202) throw new Error(`the run could not start: ${JSON.stringify(started.body)}`);
          runId = started.body.id;
          const waiting = await settle(runId);
          if (waiting.status !== 'SUSPENDED' || waiting.waiting?.prompt !== INTAKE_QUESTION) throw new Error(`the healthy run did not wait for the answer (${waiting.status})`);
          dataHash = waiting.waiting.dataHash;
        } finally {
          asking = false;
        }
      },
      async turn() {
        const answered = await server.call('POST', `/api/agent/runs/${runId}/answer`, token, { answer: ANSWER, dataHash });
        if (answered.status !== 200) return { status: answered.status, message: answered.body?.message };
        const run = await settle(runId);
        const message = run.status === 'COMPLETED' ? run.answer : run.status === 'SUSPENDED' ? run.waiting?.prompt : run.error;
        return { status: answered.status, message, detail: run };
      },
      async next() {
        const run = await runOf(runId);
        if (run.status === 'SUSPENDED') {
          const again = await server.call('POST', `/api/agent/runs/${runId}/answer`, token, { answer: ANSWER, dataHash: run.waiting?.dataHash });
          return { status: again.status, message: again.body?.message };
        }
        const started = await server.call('POST', '/api/agent/runs', token, { scenarioId: WAITING_SCENARIO_ID, input: 'The cough is back.' });
        if (started.status !== 202) return { status: started.status, message: started.body?.message };
        const settled = await settle(started.body.id);
        // A healthy model that cannot finish a new run means the agent is stuck.
        return settled.status === 'COMPLETED' ? { status: 200, message: settled.answer } : { status: 409, message: `the next run ended ${settled.status}: ${settled.error}` };
      },
      async invariant(fault, outcome) {
        const run = outcome.detail;
        if (!run) return ['the answer was not accepted'];
        const problems: string[] = [];
        if (fault.unusable && run.status === 'COMPLETED') problems.push(`COMPLETED with the answer "${String(run.answer).slice(0, 60)}" from a model answer that was not usable`);
        const kept = await waitFor(async () => {
          const conversation = await server.call('GET', `/api/conversations/${run.conversationId}`, token);
          return (conversation.body?.turns as Array<{ role: string; content: string }> | undefined)?.some((t) => t.role === 'user' && t.content === ANSWER) ? true : undefined;
        }, 'the answer in the conversation', 3_000, 100).catch(() => false);
        if (!kept) problems.push("the person's answer is not kept in the run's conversation");
        return problems;
      },
    };
  },
};
