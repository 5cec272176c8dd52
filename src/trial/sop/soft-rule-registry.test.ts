import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { User } from '../../core/auth/users.js';
import { startScriptedModel, type ScriptedModel } from '../../testing/scripted-model.js';
import { buildTestContext } from '../../testing/test-context.js';
import { registryReplacing, withLeadingSystemMessage } from '../../testing/registry-variant.js';
import { testEngines } from '../../testing/test-database.js';
import { SOFT_RULE_DEFINITION } from '../soft/index.js';
import { createTrialStore } from '../store/trial-store.js';
import { createTrialServices } from '../trial-services.js';
import { advanceTaskRun } from './engine.js';
import { getTaskRun } from './task-runs.js';

const SKILL = `
id: plausibility
name: Plausibility
start_node: soft
nodes:
  soft:
    type: soft_instruction
    instruction: Judge whether the adverse event text is plausible.
    field: ae_text
    on_pass: end_ok
    on_fail: end_ok
`;

const REGISTERED = 'The soft-rule judge as the registry holds it.';

/** QC's soft rules run the judge the agent registry holds (the one GET /api/agents lists), handed in through the trial services. */
describe.each(testEngines())('the SOP engine judges soft rules with the registered judge on %s', (engine) => {
  let model: ScriptedModel;
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let actor: User;

  beforeAll(async () => {
    model = await startScriptedModel([], { fallback: { reply: '{"passed": true, "reason": "plausible", "confidence": 0.9, "evidence": "none reported"}' } });
    const skillsDir = mkdtempSync(path.join(tmpdir(), 'clinagent-skills-'));
    writeFileSync(path.join(skillsDir, 'plausibility.yaml'), SKILL);
    // Jobs for startQcRun to queue on; no QC worker takes them: the test advances the run itself.
    ctx = await buildTestContext({ engine, startJobs: true, llmBaseUrl: model.baseURL, env: { SKILLS_DIR: skillsDir } });
    const store = createTrialStore(ctx.db);
    await store.ensureProject({ id: 'p1', name: 'Trial one' });
    await store.replaceDictionary('p1', [
      { fieldName: 'record_id', formName: 'f', fieldType: 'text', label: 'ID', choices: [], validationMin: null, validationMax: null, required: true },
      { fieldName: 'ae_text', formName: 'f', fieldType: 'text', label: 'AE', choices: [], validationMin: null, validationMax: null, required: false },
    ], 'test');
    await store.replaceEvents('p1', [{ eventName: 'baseline', label: 'Baseline', dayOffset: 0, windowBefore: 0, windowAfter: 0 }], 'test');
    await store.importRecords('p1', [{ recordId: 'S1', eventName: 'baseline', site: 'SITE-01', data: { record_id: 'S1', ae_text: 'mild headache' } }], { actor: 'test' });
    actor = (await ctx.users.create({ name: 'soft-registry-dm', role: 'data_manager' })).user;
    await ctx.users.addMember('p1', actor.id);
  });

  afterAll(async () => {
    await ctx?.close();
    await model?.close();
  });

  it('sends the instructions of the judge registered under soft_rule', async () => {
    const agents = registryReplacing(ctx.tools, ctx.agents, SOFT_RULE_DEFINITION.id, (definition) => withLeadingSystemMessage(definition, REGISTERED));
    const trial = createTrialServices({ ...ctx, agents });
    const started = await trial.qc.startQcRun(actor, 'p1', 'plausibility');
    const [run] = await trial.qc.taskRuns(actor, 'p1', { qcRunId: started.id });
    const before = model.requests.length;
    await advanceTaskRun(trial.sop, run!.id);
    expect(model.requests.length).toBeGreaterThan(before);
    expect(model.requests[before]!.body.messages[0]).toMatchObject({ role: 'system', content: REGISTERED });
    expect((await getTaskRun(ctx.db, run!.id))!.steps.map((step) => `${step.node}:${step.outcome}`)).toEqual(['soft:pass', 'end_ok:pass']);
  });
});
