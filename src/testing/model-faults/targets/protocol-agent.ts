import { streamedStatus } from '../fault-server.js';
import type { FaultTarget } from '../target.js';
import { nativeToolCall, reply } from './shapes.js';

const QUESTION = 'Does dapagliflozin slow the decline of kidney function in adults with chronic kidney disease compared with placebo?';
const block = (text: string, json: string) => `${text}\n<extracted_data>\n${json}\n</extracted_data>`;

/**
 * The Protocol Agent (POST /api/aia/protocol-agent/chat): a stage's answer is text with an <extracted_data> block.
 * A question recorded in an earlier turn is never overwritten by a broken or hostile block.
 */
export const protocolAgentTarget = protocolAgentTargetOf({ streamed: false });
/** The same over POST /api/aia/protocol-agent/chat/stream. */
export const protocolAgentStreamTarget = protocolAgentTargetOf({ streamed: true });

function protocolAgentTargetOf({ streamed }: { streamed: boolean }): FaultTarget {
  return {
    id: streamed ? 'protocol agent (streamed)' : 'protocol agent',
    covers: ['protocol_agent'],
    engines: ['pglite', 'postgres'],
    maxModelCalls: 4,
    turnLimitMs: 15_000,
    async setUp(server) {
      const { token } = await server.ctx.users.create({ name: streamed ? 'faults-pi-stream' : 'faults-pi', role: 'pi' });
      let conversationId = '';
      let preparing = false;
      const sample = { question: QUESTION, background: 'CKD progression is common despite ACE inhibitors.', rationale: 'SGLT2 inhibitors may protect the kidney.' };
      const context = async () => (await server.call('GET', `/api/aia/protocol-agent/context/${conversationId}`, token)).body;
      return {
        healthy: () => (preparing ? reply(block('A clear question. What is known so far?', JSON.stringify({ question: QUESTION }))) : reply(block('Noted the background. Why is the trial needed now?', JSON.stringify({ background: sample.background })))),
        sample: () => sample,
        embedJson: (json) => reply(block('Noted.', json)),
        say: (text) => reply(block(text, JSON.stringify({ question: text.slice(0, 2000) }))),
        callTool: (name, args) => nativeToolCall(name, args),
        loopTool: { name: 'calculate_sample_size', arguments: { design: 'two_means', meanDiff: 5, sd: 10, alpha: 0.05, power: 0.9, sides: 2 } },
        async prepare() {
          const started = await server.call('POST', '/api/aia/protocol-agent/conversations', token, { title: 'Fault suite protocol' });
          if (started.status !== 201) throw new Error(`a protocol could not start: ${JSON.stringify(started.body)}`);
          conversationId = started.body.conversationId;
          preparing = true;
          try {
            const first = await server.call('POST', '/api/aia/protocol-agent/chat', token, { conversationId, message: `My question: ${QUESTION}` });
            if (first.status !== 200) throw new Error(`the question could not be recorded: ${JSON.stringify(first.body)}`);
          } finally {
            preparing = false;
          }
          const recorded = (await context()).scientificQuestion?.question;
          if (recorded !== QUESTION) throw new Error(`the healthy turn did not record the question (got ${JSON.stringify(recorded)})`);
        },
        async turn() {
          const body = { conversationId, message: 'Background: CKD progression is common despite ACE inhibitors.' };
          if (streamed) {
            const turn = await server.stream('/api/aia/protocol-agent/chat/stream', token, body);
            return { status: streamedStatus(turn), message: turn.body?.message, watched: turn.watched, detail: turn.body };
          }
          const response = await server.call('POST', '/api/aia/protocol-agent/chat', token, body);
          return { status: response.status, message: response.body?.message, detail: response.body };
        },
        async next() {
          const response = await server.call('POST', '/api/aia/protocol-agent/chat', token, { conversationId, message: 'Rationale: SGLT2 inhibitors may protect the kidney.' });
          return { status: response.status, message: response.body?.message };
        },
        async invariant() {
          const recorded = (await context()).scientificQuestion?.question;
          return recorded === QUESTION ? [] : [`the recorded question was overwritten with ${JSON.stringify(String(recorded).slice(0, 80))}`];
        },
      };
    },
  };
}
