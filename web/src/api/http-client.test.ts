import { describe, expect, it } from 'vitest';
import { createHttpClient, filenameFromDisposition } from './http-client';

function clientAnswering(response: Response, seen: RequestInit[] = []) {
  return createHttpClient({
    getToken: () => 'token-1',
    onUnauthorized: () => {},
    fetch: async (_input, init) => {
      seen.push(init ?? {});
      return response;
    },
  });
}

describe('filenameFromDisposition', () => {
  it('reads plain and RFC 5987 file names', () => {
    expect(filenameFromDisposition('attachment; filename="p1-violations-2026-01-01.csv"')).toBe('p1-violations-2026-01-01.csv');
    expect(filenameFromDisposition("attachment; filename=\"x.csv\"; filename*=UTF-8''%E8%B4%A8%E6%8E%A7.csv")).toBe('质控.csv');
    expect(filenameFromDisposition(null)).toBeNull();
  });
});

describe('getFile', () => {
  it('sends the bearer token and returns the body with its file name', async () => {
    const seen: RequestInit[] = [];
    const http = clientAnswering(new Response('Record,Event\n', { headers: { 'content-disposition': 'attachment; filename="r.csv"' } }), seen);
    const file = await http.getFile('/api/iit/projects/p1/report?format=csv');
    expect(file.filename).toBe('r.csv');
    expect(await file.blob.text()).toBe('Record,Event\n');
    expect((seen[0]?.headers as Record<string, string>).authorization).toBe('Bearer token-1');
  });

  it('turns an error body into an ApiError with the server message', async () => {
    const http = clientAnswering(new Response(JSON.stringify({ code: 'NOT_FOUND', message: 'Project "p9" does not exist.' }), { status: 404 }));
    await expect(http.getFile('/x')).rejects.toMatchObject({ code: 'NOT_FOUND', status: 404, message: 'Project "p9" does not exist.' });
  });
});

describe('post', () => {
  it('sends a FormData as multipart (fetch sets the boundary) and anything else as JSON', async () => {
    const seen: RequestInit[] = [];
    const http = createHttpClient({ getToken: () => null, onUnauthorized: () => {}, fetch: async (_input, init) => (seen.push(init ?? {}), new Response('{"ok":true}')) });
    const form = new FormData();
    form.append('odm', new File(['<ODM/>'], 'p.xml'), 'p.xml');
    await http.post('/upload', form);
    expect(seen[0]?.body).toBe(form);
    expect((seen[0]?.headers as Record<string, string>)['content-type']).toBeUndefined();
    await http.post('/json', { a: 1 });
    expect(seen[1]?.body).toBe('{"a":1}');
    expect((seen[1]?.headers as Record<string, string>)['content-type']).toBe('application/json');
  });
});
