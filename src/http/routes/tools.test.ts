import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestContext } from '../../testing/test-context.js';
import { buildServer } from '../server.js';

type Server = Awaited<ReturnType<typeof buildServer>>;

// A pure computation: the database engine does not matter, so this runs on PGlite only.
describe('POST /api/tools/sample-size and the calculate_sample_size tool', () => {
  let ctx: Awaited<ReturnType<typeof buildTestContext>>;
  let app: Server;
  let viewer: { authorization: string };

  beforeAll(async () => {
    ctx = await buildTestContext({ engine: 'pglite' });
    app = await buildServer(ctx, { serveConsole: false });
    const { token } = await ctx.users.create({ name: 'ss-viewer', role: 'viewer' });
    viewer = { authorization: `Bearer ${token}` };
  });

  afterAll(async () => {
    await app?.close();
    await ctx?.close();
  });

  it('answers G*Power\'s 64 per group (d = 0.5, alpha .05 two-sided, power .8) to any signed-in user, a viewer included', async () => {
    const response = await app.inject({ method: 'POST', url: '/api/tools/sample-size', headers: viewer, payload: { design: 'two_means', alpha: 0.05, power: 0.8, sides: 2, effectSize: 0.5 } });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ perGroup: [64, 64], total: 128 });
    expect(response.json().method).toContain('noncentral t');
  });

  it('answers Schoenfeld events with the patients (HR 0.7 -> 247 events)', async () => {
    const response = await app.inject({ method: 'POST', url: '/api/tools/sample-size', headers: viewer, payload: { design: 'time_to_event', alpha: 0.05, power: 0.8, sides: 2, hazardRatio: 0.7, eventProbability: 0.5 } });
    expect(response.json()).toMatchObject({ events: 247, perGroup: [247, 247], total: 494 });
  });

  it('is a 400 naming the field for power 1.2 and for a non-inferiority margin of the wrong sign', async () => {
    const power = await app.inject({ method: 'POST', url: '/api/tools/sample-size', headers: viewer, payload: { design: 'two_means', alpha: 0.05, power: 1.2, sides: 2, effectSize: 0.5 } });
    expect(power.statusCode).toBe(400);
    expect(power.json()).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'power' } });
    expect(power.json().message).toContain('power');
    const margin = await app.inject({
      method: 'POST',
      url: '/api/tools/sample-size',
      headers: viewer,
      payload: { design: 'two_proportions', alpha: 0.05, power: 0.8, sides: 1, p1: 0.7, p2: 0.7, hypothesis: 'non_inferiority', margin: 0.1 },
    });
    expect(margin.statusCode).toBe(400);
    expect(margin.json()).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'margin' } });
  });

  it('needs a token', async () => {
    const response = await app.inject({ method: 'POST', url: '/api/tools/sample-size', payload: { design: 'two_means' } });
    expect(response.statusCode).toBe(401);
  });

  it('is registered as the tool calculate_sample_size, with the same answer and the same field-naming refusal', async () => {
    const ok = await ctx.tools.run('calculate_sample_size', { design: 'two_proportions', alpha: 0.05, power: 0.9, sides: 2, p1: 0.5, p2: 0.75 });
    expect(ok).toMatchObject({ success: true, result: { perGroup: [77, 77] } });
    const bad = await ctx.tools.run('calculate_sample_size', { design: 'two_proportions', alpha: 0.05, power: 0.9, sides: 2, p1: 1.5, p2: 0.75 });
    expect(bad.success).toBe(false);
    expect(JSON.stringify(bad)).toContain('p1');
  });
});
