import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { User } from '../../core/auth/users.js';
import { startScriptedModel, type ScriptedModel } from '../../testing/scripted-model.js';
import { buildTestContext } from '../../testing/test-context.js';
import { registryReplacing, withLeadingSystemMessage } from '../../testing/registry-variant.js';
import { testEngines } from '../../testing/test-database.js';
import { createConversationStore } from './conversation-store.js';
import { SUMMARIZE_TURNS_DEFINITION } from './summarize-turns.js';

const REGISTERED = 'The conversation summary as the registry holds it.';

/** The summary history strategy condenses old turns with the summary definition the agent registry holds. */
describe.each(testEngines())('the conversation store resolves the summary definition from the agent registry on %s', (engine) => {
  let model: ScriptedModel;
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let owner: User;

  beforeAll(async () => {
    model = await startScriptedModel();
    ctx = await buildTestContext({ engine, llmBaseUrl: model.baseURL });
    owner = (await ctx.users.create({ name: 'coordinator-summary-registry', role: 'coordinator' })).user;
  });

  afterAll(async () => {
    await ctx?.close();
    await model?.close();
  });

  it('sends the instructions of the registered summary definition', async () => {
    const agents = registryReplacing(ctx.tools, ctx.agents, SUMMARIZE_TURNS_DEFINITION.id, (definition) => withLeadingSystemMessage(definition, REGISTERED));
    const conversations = createConversationStore({ db: ctx.db, users: ctx.users, llm: ctx.llm, agents });
    const { id } = await conversations.start({ actor: owner, title: 'summary' });
    for (const n of [1, 2, 3]) await conversations.append(id, [{ role: 'user', content: `question ${n}` }, { role: 'assistant', content: `answer ${n}` }], owner);
    const before = model.requests.length;
    model.push({ reply: 'The user asked questions 1 and 2.' });
    const messages = await conversations.history(id, { strategy: 'summary', keepTurns: 2 }, { actor: owner });
    expect(model.requests).toHaveLength(before + 1);
    expect(model.requests[before]!.body.messages[0]).toMatchObject({ role: 'system', content: REGISTERED });
    expect(messages[0]!.content).toContain('The user asked questions 1 and 2.');
  });
});
