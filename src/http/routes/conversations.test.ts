import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConversationDetail as StoreDetail, ConversationSummary as StoreSummary } from '../../runtime/conversations/index.js';
import type { ConversationDetail, ConversationSummary } from '../../contract/index.js';
import type { User } from '../../core/auth/users.js';
import { buildTestContext } from '../../testing/test-context.js';
import { testEngines } from '../../testing/test-database.js';
import { buildServer } from '../server.js';

type Server = Awaited<ReturnType<typeof buildServer>>;

// What the store returns is what the contract says the routes send, both ways: a field added to one and not
// the other fails the type check.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const storeMatchesContract: [Same<StoreSummary, ConversationSummary>, Same<StoreDetail, ConversationDetail>] = [true, true];
void storeMatchesContract;

const ADMIN_TOKEN = 'admin-token-for-conversation-tests-0123456789';

/**
 * Conversations hold what a user asked about their trial: the owner reads theirs, an admin reads any, and to
 * anyone else a conversation looks exactly like one that does not exist.
 */
describe.each(testEngines())('conversation routes on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let app: Server;
  const users: Record<'owner' | 'other', { user: User; token: string }> = {} as never;
  const ids = { protocol: '', data: '' };

  const get = (url: string, bearer: string) => app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${bearer}` } });

  beforeAll(async () => {
    ctx = await buildTestContext({ engine });
    app = await buildServer(ctx, { serveConsole: false });
    await ctx.users.bootstrapAdmin(ADMIN_TOKEN);
    users.owner = await ctx.users.create({ name: 'coordinator-owner', role: 'coordinator' });
    users.other = await ctx.users.create({ name: 'coordinator-other', role: 'coordinator' });
    await ctx.users.createProject({ id: 'trial-a', name: 'Trial A' });
    await ctx.users.addMember('trial-a', users.owner.user.id);
    const owner = users.owner.user;
    const protocol = await ctx.conversations.start({ actor: owner, scenarioId: 'protocol-qa', title: 'Inclusion criteria' });
    await ctx.conversations.append(protocol.id, [
      { role: 'user', content: 'What are the inclusion criteria?' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'call_1', name: 'query_demo_records', arguments: '{}' }] },
      { role: 'tool', content: '{"count": 200}', toolCallId: 'call_1', toolName: 'query_demo_records' },
      { role: 'assistant', content: 'Adults aged 18-75 with hypertension [1].' },
    ], owner);
    const data = await ctx.conversations.start({ actor: owner, projectId: 'trial-a', scenarioId: 'data-completeness', title: 'Missing consent dates' });
    await ctx.conversations.append(data.id, [{ role: 'user', content: 'Which subjects miss a consent date?' }], owner);
    await ctx.conversations.start({ actor: users.other.user, scenarioId: 'protocol-qa', title: 'Someone else' });
    ids.protocol = protocol.id;
    ids.data = data.id;
  });

  afterAll(async () => {
    await app?.close();
    await ctx?.close();
  });

  it('lists your own conversations, most recently active first, filtered by scenario or project', async () => {
    const all = await get('/api/conversations', users.owner.token);
    expect(all.statusCode, all.body).toBe(200);
    expect(all.json().conversations.map((c: { id: string }) => c.id)).toEqual([ids.data, ids.protocol]);
    expect(all.json().conversations[1]).toMatchObject({ title: 'Inclusion criteria', scenarioId: 'protocol-qa', projectId: null, turnCount: 4 });

    const byScenario = await get('/api/conversations?scenarioId=protocol-qa', users.owner.token);
    expect(byScenario.json().conversations.map((c: { id: string }) => c.id)).toEqual([ids.protocol]);
    const byProject = await get('/api/conversations?projectId=trial-a', users.owner.token);
    expect(byProject.json().conversations.map((c: { id: string }) => c.id)).toEqual([ids.data]);
    const limited = await get('/api/conversations?limit=1', users.owner.token);
    expect(limited.json().conversations).toHaveLength(1);

    const others = await get('/api/conversations', users.other.token);
    expect(others.json().conversations.map((c: { title: string }) => c.title)).toEqual(['Someone else']);
  });

  it('reads your own conversation with every turn in order', async () => {
    const response = await get(`/api/conversations/${ids.protocol}`, users.owner.token);

    expect(response.statusCode, response.body).toBe(200);
    const body = response.json();
    expect(body).toMatchObject({ id: ids.protocol, title: 'Inclusion criteria', turnCount: 4, summary: null, summarizedThroughSeq: 0 });
    expect(body.turns.map((t: { seq: number; role: string }) => [t.seq, t.role])).toEqual([[1, 'user'], [2, 'assistant'], [3, 'tool'], [4, 'assistant']]);
    expect(body.turns[1].toolCalls).toEqual([{ id: 'call_1', name: 'query_demo_records', arguments: '{}' }]);
    expect(body.turns[2]).toMatchObject({ toolCallId: 'call_1', toolName: 'query_demo_records', tokens: expect.any(Number) });
  });

  it("answers 404 for another user's conversation, worded as for a missing one", async () => {
    const refused = await get(`/api/conversations/${ids.protocol}`, users.other.token);
    const missingId = '00000000-0000-4000-8000-000000000000';
    const missing = await get(`/api/conversations/${missingId}`, users.other.token);

    expect(refused.statusCode).toBe(404);
    expect(refused.json().code).toBe('NOT_FOUND');
    expect(refused.body).not.toContain('inclusion criteria');
    expect(refused.json().message).toBe(missing.json().message.replace(missingId, ids.protocol));
  });

  it('lets an admin read any conversation, while their list shows only their own', async () => {
    const response = await get(`/api/conversations/${ids.data}`, ADMIN_TOKEN);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ projectId: 'trial-a', turns: [{ content: 'Which subjects miss a consent date?' }] });
    expect((await get('/api/conversations', ADMIN_TOKEN)).json().conversations).toEqual([]);
  });

  it('refuses a malformed id, a bad limit and an unknown filter with 400 naming the field, and no token with 401', async () => {
    const malformed = await get('/api/conversations/not-a-uuid', users.owner.token);
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json().message).toContain('params.id');
    const limit = await get('/api/conversations?limit=0', users.owner.token);
    expect(limit.statusCode).toBe(400);
    expect(limit.json().message).toContain('querystring.limit');
    const unknown = await get('/api/conversations?userId=someone', users.owner.token);
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().message).toContain('userId');
    expect((await app.inject({ method: 'GET', url: '/api/conversations' })).statusCode).toBe(401);
  });
});
