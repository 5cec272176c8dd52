import { listQueries } from '../../../trial/queries.js';
import { streamedStatus } from '../fault-server.js';
import type { FaultTarget } from '../target.js';
import { asksForJson, nativeToolCall, reply } from './shapes.js';
import { createTrialProject } from './trial-project.js';

const QUESTION = 'What is the ECOG score of P003?';

/**
 * The trial assistant (POST /api/iit/projects/:projectId/chat): intent routing, then the read-only question engine.
 * Whatever the model says, no query changes and no memory line is stored from the model's words (the user asked a
 * question; they told the assistant nothing to remember).
 */
export const trialAssistantTarget = trialAssistantTargetOf({ streamed: false });
/** The same over POST /api/iit/projects/:projectId/chat/stream: the answer's text streams as the model writes it. */
export const trialAssistantStreamTarget = trialAssistantTargetOf({ streamed: true });

function trialAssistantTargetOf({ streamed }: { streamed: boolean }): FaultTarget {
  return {
    id: streamed ? 'trial assistant (streamed)' : 'trial assistant',
    covers: ['investigate', 'route_intent'],
    engines: ['pglite', 'postgres'],
    // Routing (2 rounds at most) and the question engine (ASSISTANT_MAX_ITERATIONS, 5).
    maxModelCalls: 7,
    turnLimitMs: 15_000,
    async setUp(server) {
      const project = await createTrialProject(server, streamed ? 'faults-assistant-stream' : 'faults-assistant');
      const { ctx } = server;
      const { user, token } = project.coordinator;
      const queries = async () => (await listQueries(ctx.db, { projectId: project.projectId })).map((q) => `${q.id}:${q.status}`).sort();
      const memoryLines = async () => (await ctx.memory.hot.get(user, project.projectId)).lines.map((l) => `${l.section}:${l.text}`);
      let conversationId: string | undefined;
      let before: { queries: string[]; memory: string[] } = { queries: [], memory: [] };
      const routing = (text: string) => ({ intents: [{ type: 'data_question', text }] });
      return {
        healthy: (request) => (asksForJson(request) ? reply(JSON.stringify(routing(QUESTION))) : reply('P003 has an ECOG score of 1.')),
        sample: (request) => (asksForJson(request) ? routing(QUESTION) : { answer: 'P003 has an ECOG score of 1.' }),
        embedJson: (json) => reply(json),
        // A router that routes the question and also says the user asked to remember the model's own words (the trap
        // for "stored from model text"); the question engine then answers with the text.
        say: (text, request) => (asksForJson(request) ? reply(JSON.stringify({ intents: [{ type: 'data_question', text: QUESTION }, { type: 'memory_instruction', text, fact: { section: 'prohibitions', text } }] })) : reply(text)),
        callTool: (name, args) => nativeToolCall(name, args),
        loopTool: { name: 'read_clinical_data', arguments: { record_id: 'P003' } },
        async prepare() {
          conversationId = undefined;
          before = { queries: await queries(), memory: await memoryLines() };
          if (!before.queries.some((q) => q.endsWith(':open'))) throw new Error('the assistant target has no open query to guard');
        },
        async turn() {
          if (streamed) {
            const turn = await server.stream(`/api/iit/projects/${project.projectId}/chat/stream`, token, { message: QUESTION });
            conversationId = turn.body?.conversationId;
            return { status: streamedStatus(turn), message: turn.ending === 'result' ? turn.body.answer : turn.body?.message, watched: turn.watched, detail: turn.body };
          }
          const response = await server.call('POST', `/api/iit/projects/${project.projectId}/chat`, token, { message: QUESTION });
          conversationId = response.body?.conversationId;
          return { status: response.status, message: response.status === 200 ? response.body.answer : response.body?.message, detail: response.body };
        },
        async next() {
          const response = await server.call('POST', `/api/iit/projects/${project.projectId}/chat`, token, { message: 'And the age of P003?', ...(conversationId ? { conversationId } : {}) });
          return { status: response.status, message: response.body?.answer ?? response.body?.message };
        },
        async invariant() {
          const problems: string[] = [];
          const after = { queries: await queries(), memory: await memoryLines() };
          if (after.queries.join() !== before.queries.join()) problems.push(`queries changed: ${before.queries.join(', ')} -> ${after.queries.join(', ')}`);
          const added = after.memory.filter((line) => !before.memory.includes(line));
          if (added.length) problems.push(`hot memory gained a line from the model's text: "${added[0]!.slice(0, 80)}"`);
          return problems;
        },
      };
    },
  };
}
