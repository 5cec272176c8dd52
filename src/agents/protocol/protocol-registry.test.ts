import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { User } from '../../core/auth/users.js';
import { createRunHost } from '../../runtime/runs/run-host.js';
import { createStagedAgentService } from '../../runtime/staged/staged-agent-service.js';
import { registryReplacing, withLeadingSystemMessage } from '../../testing/registry-variant.js';
import { startScriptedModel, type ScriptedModel } from '../../testing/scripted-model.js';
import { buildTestContext } from '../../testing/test-context.js';
import { testEngines } from '../../testing/test-database.js';
import { PROTOCOL_AGENT_ID } from './protocol-agent.js';
import { PROTOCOL_VALIDATORS } from './validators.js';

const REGISTERED = 'The Protocol Agent as the registry holds it.';

/**
 * A Protocol Agent stage turn runs the staged agent the registry holds under the agent's id, with the stored
 * configuration version laid over it, not a definition made from the configuration alone.
 */
describe.each(testEngines())('the Protocol Agent resolves its stage turns from the agent registry on %s', (engine) => {
  let model: ScriptedModel;
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let actor: User;

  beforeAll(async () => {
    model = await startScriptedModel();
    ctx = await buildTestContext({ llmBaseUrl: model.baseURL, engine });
    actor = (await ctx.users.create({ name: 'protocol-registry-pi', role: 'pi' })).user;
  });

  afterAll(async () => {
    await ctx?.close();
    await model?.close();
  });

  function serviceWith(agents: Parameters<typeof createStagedAgentService>[0]['agents']) {
    // A host of its own: the context's already hosts the server's staged family.
    return createStagedAgentService({
      db: ctx.db, host: createRunHost({ db: ctx.db, logger: ctx.logger }), llm: ctx.llm, tools: ctx.tools, trace: ctx.trace, logger: ctx.logger,
      workerId: 'protocol-registry-test', configs: ctx.agentConfigs, validators: PROTOCOL_VALIDATORS, conversations: ctx.conversations, users: ctx.users, agents,
    });
  }

  it('sends the instructions of the registered definition, with the stage and settings of the stored configuration', async () => {
    // The variant's own model settings differ from the configuration's: what an admin versioned must still win.
    const agents = registryReplacing(ctx.tools, ctx.agents, PROTOCOL_AGENT_ID, (definition) => withLeadingSystemMessage({ ...definition, model: { temperature: 1.9, maxTokens: 77 } }, REGISTERED));
    const staged = serviceWith(agents);
    const { run, config } = await staged.start(actor, PROTOCOL_AGENT_ID, { title: 'Statins after stroke' });
    const before = model.requests.length;
    model.push({ reply: 'Which patients do you have in mind?' });
    const reply = await staged.message(actor, PROTOCOL_AGENT_ID, run.conversationId!, 'I want to study statins after stroke.');
    expect(reply.message).toBe('Which patients do you have in mind?');
    const sent = model.requests[before]!.body;
    expect(sent.messages[0]).toMatchObject({ role: 'system', content: REGISTERED });
    // The stage's own prompt still follows: the configuration version's stage instruction is what the turn works on.
    expect(String(sent.messages[1]!.content)).toContain(config.stages[0]!.instruction.slice(0, 40));
    expect(sent).toMatchObject({ temperature: config.temperature, max_tokens: config.maxTokens });
  });

  it('refuses to start a conversation of a staged agent the registry does not hold, storing nothing', async () => {
    const agents = registryReplacing(ctx.tools, ctx.agents, PROTOCOL_AGENT_ID, (definition) => ({ ...definition, id: 'protocol_agent_elsewhere' }));
    const staged = serviceWith(agents);
    const before = await staged.list(actor, PROTOCOL_AGENT_ID);
    await expect(staged.start(actor, PROTOCOL_AGENT_ID, { title: 'Never stored' })).rejects.toMatchObject({ code: 'NOT_FOUND', message: expect.stringContaining(`Staged agent "${PROTOCOL_AGENT_ID}" is not registered`) });
    expect(await staged.list(actor, PROTOCOL_AGENT_ID)).toHaveLength(before.length);
  });

  it('answers an existing conversation whose agent left the registry with the reason, not a model call', async () => {
    const { run } = await ctx.stagedAgents.start(actor, PROTOCOL_AGENT_ID, { title: 'Before the file was removed' });
    const agents = registryReplacing(ctx.tools, ctx.agents, PROTOCOL_AGENT_ID, (definition) => ({ ...definition, id: 'protocol_agent_elsewhere' }));
    const before = model.requests.length;
    await expect(serviceWith(agents).message(actor, PROTOCOL_AGENT_ID, run.conversationId!, 'Statins after stroke')).rejects.toMatchObject({ code: 'NOT_FOUND', message: expect.stringContaining('restore the file') });
    expect(model.requests).toHaveLength(before);
  });
});
