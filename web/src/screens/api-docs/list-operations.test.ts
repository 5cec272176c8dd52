import { describe, expect, it } from 'vitest';
import { listOperations, matchesFilter } from './list-operations';
import { resolveRefs } from './resolve-refs';

describe('listOperations', () => {
  it('groups by first tag in declared order and puts untagged operations last', () => {
    const groups = listOperations({
      tags: [{ name: 'agent' }, { name: 'auth' }],
      paths: {
        '/api/health': { get: { summary: 'Health' } },
        '/api/me': { get: { tags: ['auth'] } },
        '/api/agent/run': { post: { tags: ['agent'] }, parameters: [] },
        '/api/zeta': { get: { tags: ['zeta'] } },
      },
    });
    expect(groups.map((group) => group.tag)).toEqual(['agent', 'auth', 'zeta', null]);
    // `parameters` on a path item is not an operation and must not appear as one.
    expect(groups[0]?.operations.map((op) => op.method)).toEqual(['post']);
  });

  it('filters on method, path and summary', () => {
    const entry = { method: 'post' as const, path: '/api/agent/run', operation: { summary: 'Run an agent' } };
    expect(matchesFilter(entry, 'RUN AN')).toBe(true);
    expect(matchesFilter(entry, 'traces')).toBe(false);
  });
});

describe('resolveRefs', () => {
  it('inlines local references and stops at recursion', () => {
    const root = {
      components: {
        schemas: {
          Node: { type: 'object', properties: { child: { $ref: '#/components/schemas/Node' } } },
        },
      },
    };
    expect(resolveRefs({ $ref: '#/components/schemas/Node' }, root)).toEqual({
      type: 'object',
      properties: { child: { $ref: '#/components/schemas/Node' } },
    });
  });

  it('leaves unknown references untouched', () => {
    expect(resolveRefs({ $ref: '#/components/schemas/Missing' }, {})).toEqual({ $ref: '#/components/schemas/Missing' });
  });
});
