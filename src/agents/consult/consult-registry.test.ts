import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { User } from '../../core/auth/users.js';
import { createAgentRegistry } from '../../runtime/definitions/index.js';
import { createRunHost } from '../../runtime/runs/run-host.js';
import { startScriptedModel, type ScriptedModel } from '../../testing/scripted-model.js';
import { buildTestContext } from '../../testing/test-context.js';
import { withLeadingSystemMessage } from '../../testing/registry-variant.js';
import { testEngines } from '../../testing/test-database.js';
import { createConsultService } from './consult-service.js';
import { CONSULT_AGENT_ID, CONSULT_DEFINITION } from './definition.js';

const REGISTERED = 'The consult as the registry holds it.';

/** A consult turn runs the definition the agent registry holds under the consult's id, not a constant of its module. */
describe.each(testEngines())('the consult resolves its definition from the agent registry on %s', (engine) => {
  let model: ScriptedModel;
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let actor: User;

  beforeAll(async () => {
    model = await startScriptedModel();
    ctx = await buildTestContext({ llmBaseUrl: model.baseURL, engine });
    actor = (await ctx.users.create({ name: 'consult-registry-coordinator', role: 'coordinator' })).user;
  });

  afterAll(async () => {
    await ctx?.close();
    await model?.close();
  });

  it('sends the instructions of the registered definition', async () => {
    const agents = createAgentRegistry(ctx.tools);
    agents.register(withLeadingSystemMessage(CONSULT_DEFINITION, REGISTERED));
    expect(agents.get(CONSULT_AGENT_ID).instructions).not.toBe(ctx.agents.get(CONSULT_AGENT_ID).instructions);
    // A host of its own: the context's already hosts the server's consult family.
    const consult = createConsultService({
      db: ctx.db, host: createRunHost({ db: ctx.db, logger: ctx.logger }), llm: ctx.llm, tools: ctx.tools, agents, trace: ctx.trace, logger: ctx.logger,
      workerId: 'consult-registry-test', conversations: ctx.conversations, users: ctx.users, maxImageBytes: 1_000_000, tokenBudget: 24_000,
    });
    const { sessionId } = await consult.start(actor, { title: 'Rash' });
    const before = model.requests.length;
    model.push({ reply: JSON.stringify({ thought: 'Ask how long.', action: 'respond', response: 'How long have you had it?', medical_context_update: { symptoms: ['rash'] } }) });
    const reply = await consult.message(actor, sessionId, 'I have a rash on my arm.');
    expect(reply).toMatchObject({ action: 'respond', response: 'How long have you had it?' });
    expect(model.requests[before]!.body.messages[0]).toMatchObject({ role: 'system', content: REGISTERED });
  });
});
