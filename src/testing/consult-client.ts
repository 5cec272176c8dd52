import { expect } from 'vitest';
import type { ConsultReply, ConsultSession } from '../contract/index.js';

/**
 * The consult's HTTP routes as its tests call them. `target` is read at each call, since a suite's server and
 * patient token are made in its beforeAll; `call` takes another token to act as someone else.
 */
export function consultClient(target: () => { url: string; token: string }, options: { title?: string } = {}) {
  async function call(method: string, path: string, body?: unknown, token = target().token) {
    const response = await fetch(`${target().url}${path}`, { method, headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) });
    const type = response.headers.get('content-type') ?? '';
    return { status: response.status, headers: response.headers, body: (type.includes('json') ? await response.json() : type.includes('text') ? await response.text() : Buffer.from(await response.arrayBuffer())) as any };
  }
  return {
    call,
    start: async () => (await call('POST', '/api/consult/sessions', { title: options.title ?? 'Consult' })).body.sessionId as string,
    /** One patient message (with an optional image), which must be answered 200. */
    async say(sessionId: string, message: string, image?: { data: string }): Promise<ConsultReply> {
      const answered = await call('POST', `/api/consult/sessions/${sessionId}/messages`, { message, ...(image ? { image } : {}) });
      expect(answered.status, JSON.stringify(answered.body)).toBe(200);
      return answered.body as ConsultReply;
    },
    session: async (sessionId: string) => (await call('GET', `/api/consult/sessions/${sessionId}`)).body as ConsultSession,
  };
}
