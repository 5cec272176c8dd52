import { describe, expect, it } from 'vitest';
import type { HttpClient } from './http-client';
import { createTrialApi, importForm } from './trial-api';
import type { DataQuery, DataQueryPage } from './trial-types';

const query = (n: number) => ({ id: `q${n}` }) as DataQuery;
const counts = { held: 0, open: 0, answered: 0, closed: 0, reopened: 0, cancelled: 0 };

describe('the trial API client on the paged query list', () => {
  it('asks for one page with its filters, paging and sort in the URL', async () => {
    const calls: string[] = [];
    const http = { get: async (path: string) => (calls.push(path), { queries: [], total: 0, page: 2, pageSize: 25, counts }) } as unknown as HttpClient;
    await createTrialApi(http).pageQueries('p 1', { status: 'open', site: '' }, { page: 2, pageSize: 25, sort: 'severity', order: 'asc' });
    expect(calls).toEqual(['/api/iit/projects/p%201/queries?status=open&page=2&pageSize=25&sort=severity&order=asc']);
  });

  it('lists every matching query across pages, so a run with more than one page of queries is not cut off', async () => {
    const total = 1203;
    const calls: string[] = [];
    const http = {
      get: async (path: string): Promise<DataQueryPage> => {
        calls.push(path);
        const page = Number(new URL(path, 'http://x').searchParams.get('page'));
        const from = (page - 1) * 500;
        return { queries: Array.from({ length: Math.max(0, Math.min(500, total - from)) }, (_, i) => query(from + i)), total, page, pageSize: 500, counts };
      },
    } as unknown as HttpClient;
    const all = await createTrialApi(http).listQueries('p1', { taskRunId: 'run-1' });
    expect(all).toHaveLength(total);
    expect(all.at(-1)!.id).toBe('q1202');
    expect(calls).toEqual([1, 2, 3].map((page) => `/api/iit/projects/p1/queries?taskRunId=run-1&page=${page}&pageSize=500`));
  });

  it('closes the selection with one reason in one request', async () => {
    const calls: Array<[string, unknown]> = [];
    const http = { post: async (path: string, body: unknown) => (calls.push([path, body]), { closed: 2, skipped: [] }) } as unknown as HttpClient;
    expect(await createTrialApi(http).bulkCloseQueries('p1', ['a', 'b'], 'duplicates')).toEqual({ closed: 2, skipped: [] });
    expect(calls).toEqual([['/api/iit/projects/p1/queries/bulk-close', { queryIds: ['a', 'b'], reason: 'duplicates' }]]);
  });

  it('sends an import and its preview as multipart parts named as the server reads them, with the file names', async () => {
    const calls: Array<[string, unknown]> = [];
    const http = { post: async (path: string, body: unknown) => (calls.push([path, body]), {}) } as unknown as HttpClient;
    const files = { dictionary: new File(['d'], 'Dict 2025.csv'), records: new File(['r'], 'records.csv') };
    await createTrialApi(http).previewImport('p 1', files);
    await createTrialApi(http).importFiles('p 1', files);
    expect(calls.map(([path]) => path)).toEqual(['/api/iit/projects/p%201/imports?preview=true', '/api/iit/projects/p%201/imports']);
    const form = calls[0]![1] as FormData;
    expect([...form.keys()]).toEqual(['dictionary', 'records']);
    expect((form.get('dictionary') as File).name).toBe('Dict 2025.csv');
    expect([...importForm({ odm: new File(['<ODM/>'], 'p.xml'), events: undefined }).keys()]).toEqual(['odm']);
  });
});
