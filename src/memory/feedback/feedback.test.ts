import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { User } from '../../core/auth/users.js';
import { answerFeedback } from '../../core/db/schema/memory.js';
import { buildTestContext } from '../../testing/test-context.js';
import { testEngines } from '../../testing/test-database.js';
import type { FeedbackService, MemoryDeps } from '../types.js';
import { createFeedback } from './index.js';

describe.each(testEngines())('answer feedback on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let feedback: FeedbackService;
  let pi: User;
  let viewer: User;
  let outsider: User;
  let conversationA: string;
  let conversationB: string;

  beforeAll(async () => {
    ctx = await buildTestContext({ engine });
    // A clock a minute apart per rating: two ratings within one millisecond would tie, and "newest first" needs an order.
    let minute = 0;
    const now = () => new Date(Date.UTC(2026, 0, 5, 9, minute++));
    const deps: MemoryDeps = { db: ctx.db, llm: ctx.llm, trace: ctx.trace, logger: ctx.logger, users: ctx.users, conversations: ctx.conversations, agents: ctx.agents, config: { hotMaxTokens: 2000, historyWeeks: 50 }, now };
    feedback = createFeedback(deps);
    pi = (await ctx.users.create({ name: 'pi-feedback', role: 'pi' })).user;
    viewer = (await ctx.users.create({ name: 'viewer-feedback', role: 'viewer' })).user;
    outsider = (await ctx.users.create({ name: 'crc-elsewhere', role: 'coordinator' })).user;
    for (const id of ['fb-a', 'fb-b']) {
      await ctx.users.createProject({ id, name: id });
      await ctx.users.addMember(id, pi.id);
    }
    await ctx.users.addMember('fb-a', viewer.id);
    await ctx.users.addMember('fb-b', outsider.id);
    conversationA = (await ctx.conversations.start({ actor: pi, projectId: 'fb-a', title: 'a' })).id;
    conversationB = (await ctx.conversations.start({ actor: pi, projectId: 'fb-b', title: 'b' })).id;
    for (const id of [conversationA, conversationB]) {
      await ctx.conversations.append(id, [{ role: 'user', content: 'How many subjects?' }, { role: 'assistant', content: '42 subjects.' }, { role: 'user', content: 'And at site 2?' }, { role: 'assistant', content: '7.' }], pi);
    }
  });

  afterAll(async () => {
    await ctx?.close();
  });

  it("lets any member, a viewer too, rate an assistant answer, and rating again replaces the member's own rating", async () => {
    const first = await feedback.record(viewer, 'fb-a', { conversationId: conversationA, turnSeq: 2, rating: 'down', comment: '  Too long  ' });
    expect(first).toMatchObject({ projectId: 'fb-a', conversationId: conversationA, turnSeq: 2, userId: viewer.id, rating: 'down', comment: 'Too long', distilledAt: null });

    const again = await feedback.record(viewer, 'fb-a', { conversationId: conversationA, turnSeq: 2, rating: 'up' });
    expect(again).toMatchObject({ id: first.id, rating: 'up', comment: 'Too long' });
    await feedback.record(pi, 'fb-a', { conversationId: conversationA, turnSeq: 4, rating: 'up' });

    const listed = await feedback.list(pi, 'fb-a');
    expect(listed.map((f) => [f.userId, f.turnSeq, f.rating])).toEqual([
      [pi.id, 4, 'up'],
      [viewer.id, 2, 'up'],
    ]);
  });

  it('clears distilled_at when the rating or comment changes, and only then', async () => {
    const rated = await feedback.record(pi, 'fb-a', { conversationId: conversationA, turnSeq: 2, rating: 'down', comment: 'Wrong site' });
    const markRead = () => ctx.db.update(answerFeedback).set({ distilledAt: new Date() }).where(eq(answerFeedback.id, rated.id));

    await markRead();
    expect((await feedback.record(pi, 'fb-a', { conversationId: conversationA, turnSeq: 2, rating: 'down', comment: 'Wrong site' })).distilledAt).not.toBeNull();
    expect((await feedback.record(pi, 'fb-a', { conversationId: conversationA, turnSeq: 2, rating: 'down' })).distilledAt).not.toBeNull();
    expect((await feedback.record(pi, 'fb-a', { conversationId: conversationA, turnSeq: 2, rating: 'up' })).distilledAt).toBeNull();
    await markRead();
    expect((await feedback.record(pi, 'fb-a', { conversationId: conversationA, turnSeq: 2, rating: 'up', comment: 'Right after all' })).distilledAt).toBeNull();
  });

  it('refuses a conversation of another project as not found, and explains a turn that is not an assistant answer', async () => {
    await expect(feedback.record(pi, 'fb-a', { conversationId: conversationB, turnSeq: 2, rating: 'up' })).rejects.toMatchObject({ code: 'NOT_FOUND', status: 404 });
    await expect(feedback.record(pi, 'fb-a', { conversationId: 'not-a-uuid', turnSeq: 2, rating: 'up' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(feedback.record(pi, 'fb-a', { conversationId: conversationA, turnSeq: 3, rating: 'up' })).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      message: expect.stringContaining('turn 3 is a user turn'),
    });
    await expect(feedback.record(pi, 'fb-a', { conversationId: conversationA, turnSeq: 9, rating: 'up' })).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      message: expect.stringContaining('has no turn 9 (it has turns 1 to 4)'),
    });
  });

  it('reports every bad field at once, a comment over 2000 characters among them', async () => {
    const error = await feedback
      .record(pi, 'fb-a', { conversationId: conversationA, turnSeq: 0, rating: 'meh' as 'up', comment: 'x'.repeat(2001) })
      .then(
        () => undefined,
        (e: unknown) => e as { code: string; details: { problems: string[] } },
      );
    expect(error).toMatchObject({ code: 'VALIDATION_FAILED' });
    expect(error!.details.problems).toEqual([
      'turnSeq: must be the seq (1, 2, 3...) of the assistant answer rated',
      'rating: must be "up" or "down"',
      'comment: 2001 characters; keep it under 2000',
    ]);
    await expect(feedback.record(pi, 'fb-a', { conversationId: conversationA, turnSeq: 4, rating: 'down', comment: '很'.repeat(2000) })).resolves.toMatchObject({ rating: 'down' });
  });

  it('is for members only', async () => {
    await expect(feedback.record(outsider, 'fb-a', { conversationId: conversationA, turnSeq: 2, rating: 'up' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(feedback.list(outsider, 'fb-a')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(await feedback.list(outsider, 'fb-b')).toEqual([]);
  });
});
