import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rejectionOf } from '../../../testing/error-of.js';
import { startScriptedDify, type ScriptedDify } from '../../../testing/scripted-dify.js';
import { createDifyClient } from './dify-client.js';
import { createDifyFetch } from './dify-fetch.js';

const chatBody = { query: 'When is visit 2?', inputs: {}, user: 'u1' };

/**
 * Issue 32: the address a Dify host name resolves to is checked when the connection is made, not only when the
 * scenario is loaded: a name that later resolves inside (DNS rebinding, or one that always did) is refused.
 */
describe('the Dify connection checks the resolved address', () => {
  let dify: ScriptedDify;
  let byName: string;

  beforeAll(async () => {
    dify = await startScriptedDify();
    // A name, not an IP: it is looked up at connect time, and resolves to loopback here.
    byName = dify.baseURL.replace('127.0.0.1', 'localhost');
  });
  afterAll(async () => {
    await dify?.close();
  });

  it('refuses a host name that resolves to a non-public address, naming the address and the setting', async () => {
    const client = createDifyClient({ scenarioId: 'rebound', baseUrl: byName, apiKey: 'app-key-0123456789', retryDelaysMs: [], fetch: createDifyFetch([]) });
    const error = await rejectionOf(client.start('chat-messages', chatBody, { traceId: 't1' }));
    expect(error.code).toBe('UPSTREAM_FAILED');
    expect(error.message).toMatch(/localhost resolves to .*(127\.0\.0\.1|::1).*a loopback address; a Dify host must be public unless the server names it in DIFY_ALLOWED_HOSTS/);
    expect(error.message).not.toContain('app-key-0123456789');
    expect(dify.requests).toHaveLength(0);
  });

  it('connects to a non-public host the administrator named in DIFY_ALLOWED_HOSTS', async () => {
    dify.push({ events: [{ event: 'message', answer: 'Week 4.' }, { event: 'message_end', metadata: {} }] });
    const client = createDifyClient({ scenarioId: 'allowed', baseUrl: byName, apiKey: 'app-key-0123456789', retryDelaysMs: [], fetch: createDifyFetch(['LOCALHOST']) });
    const response = await client.start('chat-messages', chatBody, { traceId: 't2' });
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('Week 4.');
    expect(dify.requests).toHaveLength(1);
  });
});
