import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Database } from '../../core/db/connect.js';
import { ClinAgentError } from '../../core/errors.js';
import { ALL_TRACES } from '../../core/trace/store.js';
import { readEventStream } from '../../testing/read-event-stream.js';
import { startScriptedModel, type ScriptedModel } from '../../testing/scripted-model.js';
import { startServerOn, type ServerOnDatabase } from '../../testing/server-on-database.js';
import { openTestDatabase, testEngines } from '../../testing/test-database.js';
import { waitFor } from '../../testing/wait-for.js';
import { createConversationRuns, type ConversationRunState } from './conversation-runs.js';

interface TagState extends ConversationRunState {
  tags: string[];
  tokensUsed: number;
}

/**
 * The conversation-run machinery the consult and the Protocol Agent share, under a misbehaving model: a step that
 * trips over the model's output ends its turn and frees the conversation, and a stream the person closes is traced
 * as cancelled.
 */
describe.each(testEngines())('conversation runs on %s', (engine) => {
  let database: Database;
  let model: ScriptedModel;
  let server: ServerOnDatabase;

  beforeAll(async () => {
    database = await openTestDatabase({ engine });
    model = await startScriptedModel([]);
    server = await startServerOn(database, { engine, llmBaseUrl: model.baseURL });
  });
  afterAll(async () => {
    await server?.close();
    await model?.close();
  });

  it('ends a step that trips over the model output: the conversation waits for the next message at once, nothing calls the model again, and the tokens count', async () => {
    const { ctx } = server;
    const { user } = await ctx.users.create({ name: 'tagger', role: 'coordinator' });
    const steps: string[] = [];
    const runs = createConversationRuns<TagState, { text: string }>({
      db: ctx.db, host: ctx.agentRunHost, trace: ctx.trace, logger: ctx.logger, workerId: 'test-worker', conversations: ctx.conversations, users: ctx.users,
      kindPrefix: 'tagger:', label: 'Tagging', traceKind: 'tagger', input: z.object({ text: z.string() }),
      chargeTokens: (state, tokens) => ({ ...state, tokensUsed: state.tokensUsed + tokens }),
      async step(_run, { given, state, trace }) {
        const text = given.kind === 'answer' ? given.input.text : '';
        steps.push(text);
        const answer = await ctx.llm.chat({ messages: [{ role: 'user', content: text }] }, trace);
        // A reader that trusts the model's shape, as the consult's did: a string where a list was promised throws.
        const tags = (JSON.parse(answer.content) as { tags: string[] }).tags.filter((tag) => tag.length > 0);
        return { state: { ...state, tags: [...state.tags, ...tags], tokensUsed: state.tokensUsed + answer.usage.promptTokens + answer.usage.completionTokens }, type: 'message', outcome: 'tagged' };
      },
    });
    const conversation = await ctx.conversations.start({ actor: user, scenarioId: 'tagger', title: 'Tags' });
    const created = await runs.create(user, { agentId: 'tagger', conversationId: conversation.id, state: { tags: [], tokensUsed: 0, traceIds: [], updatedAt: new Date().toISOString() } });

    model.push({ reply: '{"tags": "left forearm"}', usage: { prompt_tokens: 700, completion_tokens: 40 } });
    const failed = await runs.take(created, user, { kind: 'answer', input: { text: 'first' } }).then(() => undefined, (error: unknown) => error);
    expect(ClinAgentError.isInstance(failed) && failed.code).toBe('INTERNAL');
    expect((failed as Error).message).not.toContain('filter');
    const after = (await runs.store.get(ctx.db, created.id))!;
    expect(after.status).toBe('SUSPENDED');
    expect(runs.stateOf(after).tokensUsed).toBe(740);
    // The operator detail is in the trace, not in what the person was told.
    const trace = (await ctx.trace.get(runs.stateOf(after).traceIds.at(-1)!, ALL_TRACES))!;
    expect(trace).toMatchObject({ status: 'failed', error: expect.stringContaining('filter') });

    model.push({ reply: '{"tags": ["arm"]}', usage: { prompt_tokens: 10, completion_tokens: 5 } });
    const answered = await runs.take(after, user, { kind: 'answer', input: { text: 'second' } });
    expect(runs.stateOf(answered)).toMatchObject({ tags: ['arm'], tokensUsed: 755 });
    expect(steps).toEqual(['first', 'second']);
    expect(model.requests).toHaveLength(2);
  });

  it("waits for the step of a run another worker took over, answers with the run as that worker saved it, and stops waiting when told", async () => {
    const { ctx } = server;
    const { user } = await ctx.users.create({ name: 'waiter', role: 'coordinator' });
    const runs = createConversationRuns<TagState, { text: string }>({
      db: ctx.db, host: ctx.agentRunHost, trace: ctx.trace, logger: ctx.logger, workerId: 'test-worker', conversations: ctx.conversations, users: ctx.users,
      kindPrefix: 'waiter:', label: 'Waiting', traceKind: 'waiter', input: z.object({ text: z.string() }),
      step: () => Promise.reject(new Error('this process never holds the run')),
    });
    const conversation = await ctx.conversations.start({ actor: user, scenarioId: 'waiter', title: 'Wait' });
    const state = { tags: [], tokensUsed: 0, traceIds: [], updatedAt: new Date().toISOString() };
    const created = await runs.create(user, { agentId: 'waiter', conversationId: conversation.id, state });
    /** The person's message is taken, and a worker of another process (a recovering job) gets the run first. */
    const takenElsewhere = async (owner: string) => {
      await runs.store.decide(ctx.db, created.id, { kind: 'answer', actor: user.id, input: { text: 'hello' } });
      const held = await runs.store.acquireLease(ctx.db, created.id, owner);
      expect(held).toMatchObject({ status: 'RUNNING', leaseOwner: owner });
      // This request's own advance finds the run taken and runs nothing.
      expect(await runs.advance(created.id)).toBeUndefined();
      return held!;
    };

    const held = await takenElsewhere('other-process#1');
    const waiting = runs.waitForStep(created.id);
    const saved = await runs.store.commitStep(ctx.db, held, 'other-process#1', { node: 'input', type: 'message', at: new Date().toISOString(), outcome: 'answered' }, {
      nextNode: 'input', status: 'SUSPENDED', onApprove: 'input', onReject: 'input', reviewRequest: { awaiting: 'input' }, state: { ...state, tags: ['answered elsewhere'] },
    });
    expect(saved).toMatchObject({ status: 'SUSPENDED' });
    const after = await waiting;
    expect(after).toMatchObject({ id: created.id, status: 'SUSPENDED' });
    expect(runs.stateOf(after).tags).toEqual(['answered elsewhere']);

    // A worker that never saves: the wait ends with a reload hint once its budget is spent, or as soon as the person leaves.
    await takenElsewhere('other-process#2');
    await expect(runs.waitForStep(created.id, { timeoutMs: 0 })).rejects.toMatchObject({ code: 'CONFLICT_STATE' });
    const controller = new AbortController();
    const left = runs.waitForStep(created.id, { signal: controller.signal });
    controller.abort();
    await expect(left).rejects.toMatchObject({ code: 'CANCELLED' });
  });

  it("traces a Protocol Agent stream the person closed as cancelled, saying why, and the conversation takes the next message", async () => {
    const { ctx } = server;
    const { token } = await ctx.users.create({ name: 'protocol-writer', role: 'pi' });
    const post = (path: string, body: unknown, signal?: AbortSignal) =>
      fetch(`${server.url}${path}`, { method: 'POST', signal, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'text/event-stream' }, body: JSON.stringify(body) });
    const { conversationId } = (await (await post('/api/aia/protocol-agent/conversations', { title: 'Dropped' })).json()) as { conversationId: string };

    const before = model.requests.length;
    // The model stalls after its first pieces: the person closes the stream mid-answer, however slow the machine.
    model.push({ reply: 'A long answer about the scientific question that the person will not wait for, written slowly.', stream: { pieceChars: 2, stallAfterChunks: 4 } });
    const controller = new AbortController();
    const response = await post('/api/aia/protocol-agent/chat/stream', { conversationId, message: 'Does drug A lower blood pressure?' }, controller.signal);
    for await (const event of readEventStream(response)) if (event.event === 'text_delta') break;
    controller.abort();

    await waitFor(async () => model.requests[before]?.stream?.isClientGone, 'the server to stop reading the model stream', 10_000, 20);
    const [trace] = await waitFor(async () => {
      const traces = (await ctx.trace.list(ALL_TRACES, { limit: 5 })).filter((t) => t.kind === 'staged_agent');
      return traces[0] && traces[0].status !== 'running' && traces;
    }, 'the protocol trace to end', 10_000, 50);
    expect(trace).toMatchObject({ status: 'cancelled', error: expect.any(String) });
    expect(trace!.error).not.toBe('');

    model.push({ reply: 'Which population do you have in mind?' });
    const next = await fetch(`${server.url}/api/aia/protocol-agent/chat`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ conversationId, message: 'Does drug A lower blood pressure?' }) });
    expect(next.status).toBe(200);
  });
});
