import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestContext } from '../test-context.js';
import { faultTargets } from './targets/index.js';
import { shippedScenarios } from './targets/scenario.js';

/**
 * A new agent joins the model-fault suite by being registered: this fails while an agent of the agent-definition
 * registry, or a scenario shipped in scenarios/, has no target in targets/index.ts.
 */
describe('the model-fault suite covers every agent', () => {
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  beforeAll(async () => {
    ctx = await buildTestContext({ llmBaseUrl: 'http://127.0.0.1:9/v1' });
  });
  afterAll(async () => {
    await ctx?.close();
  });

  const covered = () => new Set(faultTargets().flatMap((t) => t.covers));

  it('has a target for every agent in the registry', () => {
    const registered = ctx.agents.list().map((d) => d.id);
    expect(registered.length).toBeGreaterThan(5);
    expect(registered.filter((id) => !covered().has(id)), 'agents without a fault target: add one in src/testing/model-faults/targets/').toEqual([]);
  });

  it('has a target for every shipped scenario, run through POST /api/agent/run', () => {
    const shipped = shippedScenarios().map((s) => s.id);
    expect(shipped.length).toBeGreaterThan(0);
    expect(shipped.filter((id) => !covered().has(id))).toEqual([]);
  });

  it('names every target once, and each covers an agent of the registry or a shipped scenario', () => {
    const ids = faultTargets().map((t) => t.id);
    expect(new Set(ids).size).toBe(ids.length);
    // One-round calls (the weekly report, the distiller, ...) are registered definitions too: none is left outside.
    expect(faultTargets().filter((t) => t.covers.length === 0).map((t) => t.id)).toEqual([]);
  });
});
