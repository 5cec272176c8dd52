import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { openTestDatabase } from '../../testing/test-database.js';
import type { Database } from '../db/connect.js';
import { ClinAgentError } from '../errors.js';
import { ALL_TRACES, createTraceStore } from '../trace/store.js';
import { ARGUMENTS_WITHHELD, createToolRegistry, type ToolDefinition } from './registry.js';

const addTool: ToolDefinition<{ a: number; b: number; note?: string }> = {
  name: 'add',
  description: 'Add two numbers.',
  schema: z.object({ a: z.number().describe('first addend'), b: z.number().int().min(0).max(1000), note: z.string().optional() }),
  run: ({ a, b }) => ({ sum: a + b }),
};

const pageTool: ToolDefinition<{ limit: number }> = {
  name: 'page',
  description: 'Return a page size.',
  schema: z.object({ limit: z.number().int().min(1).max(100).default(20) }),
  run: ({ limit }) => ({ limit }),
};

const throwingTool: ToolDefinition<Record<string, never>> = {
  name: 'explode',
  description: 'Always fails.',
  schema: z.object({}),
  run: () => {
    throw new Error('the site database is offline');
  },
};

function registryWithTools() {
  const registry = createToolRegistry();
  registry.register(addTool);
  registry.register(pageTool);
  registry.register(throwingTool);
  return registry;
}

let database: Database;

beforeAll(async () => {
  database = await openTestDatabase();
});

afterAll(async () => {
  await database?.close();
});

describe('createToolRegistry', () => {
  it('registers, gets and lists tools in registration order', () => {
    const registry = registryWithTools();

    expect(registry.get('add')).toBe(addTool);
    expect(registry.get('missing')).toBeUndefined();
    expect(registry.list().map((tool) => tool.name)).toEqual(['add', 'page', 'explode']);
  });

  it('rejects a second tool with the same name', () => {
    const registry = registryWithTools();

    expect(() => registry.register({ ...addTool })).toThrow(expect.objectContaining({ code: 'CONFLICT_STATE', message: expect.stringContaining('"add"') }));
    expect(registry.list()).toHaveLength(3);
  });

  it.each(['', '1add', 'add tool', 'add.tool', 'a'.repeat(65), 'добавить'])('rejects the invalid name %j', (name) => {
    const registry = createToolRegistry();

    let thrown: unknown;
    try {
      registry.register({ ...addTool, name });
    } catch (error) {
      thrown = error;
    }
    expect(ClinAgentError.isInstance(thrown) && thrown.code).toBe('VALIDATION_FAILED');
    expect(registry.list()).toHaveLength(0);
  });

  it('runs a tool with validated arguments and returns the one result shape', async () => {
    const result = await registryWithTools().run('add', { a: 2.5, b: 3 });

    expect(result).toEqual({ toolName: 'add', success: true, arguments: { a: 2.5, b: 3 }, result: { sum: 5.5 }, error: '' });
  });

  it('applies schema defaults before the tool runs', async () => {
    expect(await registryWithTools().run('page', {})).toMatchObject({ success: true, arguments: { limit: 20 }, result: { limit: 20 } });
  });

  it('reports each invalid argument on its own `path: message` line', async () => {
    const result = await registryWithTools().run('add', { a: 'two', b: -1, note: 7 });

    expect(result.success).toBe(false);
    expect(result.result).toBeNull();
    expect(result.arguments).toEqual({ a: 'two', b: -1, note: 7 });
    const [heading, ...lines] = result.error.split('\n');
    expect(heading).toBe('Invalid arguments for add:');
    expect(lines).toHaveLength(3);
    expect(lines).toEqual(
      expect.arrayContaining([expect.stringMatching(/^a: .*number/), expect.stringMatching(/^b: .*>=\s*0/), expect.stringMatching(/^note: .*string/)]),
    );
  });

  it('parses JSON-string arguments as a model sends them, empty meaning no arguments', async () => {
    const registry = registryWithTools();

    expect(await registry.run('add', '{"a": 1, "b": 2}')).toMatchObject({ success: true, arguments: { a: 1, b: 2 }, result: { sum: 3 } });
    expect(await registry.run('page', '  ')).toMatchObject({ success: true, result: { limit: 20 } });
  });

  it('fails with a clear error when the arguments are not valid JSON', async () => {
    const result = await registryWithTools().run('add', '{"a": 1, "b": ');

    expect(result).toMatchObject({ toolName: 'add', success: false, arguments: '{"a": 1, "b": ', result: null });
    expect(result.error).toMatch(/^Arguments are not valid JSON/);
    expect(result.error).toMatch(/one JSON object/);
  });

  it('fails for an unknown tool, listing the tools that exist', async () => {
    const result = await registryWithTools().run('substract', { a: 1 });

    expect(result).toMatchObject({ toolName: 'substract', success: false, result: null });
    expect(result.error).toBe('Unknown tool "substract". Available tools: add, page, explode.');
    expect((await createToolRegistry().run('any', {})).error).toContain('(none)');
  });

  it('turns a throwing tool into a failed result instead of throwing', async () => {
    const result = await registryWithTools().run('explode', {});

    expect(result).toEqual({ toolName: 'explode', success: false, arguments: {}, result: null, error: 'explode failed: the site database is offline' });
  });

  it('gives the model JSON Schema parameters without a $schema key', () => {
    const [add, page] = registryWithTools().specs(['add', 'page']);

    expect(add).toEqual({
      name: 'add',
      description: 'Add two numbers.',
      parameters: {
        type: 'object',
        properties: { a: { type: 'number', description: 'first addend' }, b: { type: 'integer', minimum: 0, maximum: 1000 }, note: { type: 'string' } },
        required: ['a', 'b'],
      },
    });
    expect(add!.parameters).not.toHaveProperty('$schema');
    // A field with a default is optional to the model: it may leave it out.
    expect(page!.parameters).toMatchObject({ properties: { limit: { type: 'integer', default: 20, minimum: 1, maximum: 100 } } });
    expect(page!.parameters.required ?? []).not.toContain('limit');
  });

  it('refuses specs for an unknown tool with NOT_FOUND naming what exists', () => {
    const registry = registryWithTools();

    expect(() => registry.specs(['add', 'nope'])).toThrow(expect.objectContaining({ code: 'NOT_FOUND', message: expect.stringContaining('Available tools: add, page, explode') }));
  });

  it('records every call on the trace, failed calls as failed spans with their error', async () => {
    const store = createTraceStore(database.db);
    const run = await store.start({ kind: 'agent', name: 'tool-trace' });
    const registry = registryWithTools();

    await registry.run('add', { a: 1, b: 2 }, run);
    await registry.run('add', { a: 'x', b: 2 }, run);
    await registry.run('explode', {}, run);
    await registry.run('ghost', {}, run);

    const view = await store.get(run.traceId, ALL_TRACES);
    expect(view?.spans.map((s) => [s.kind, s.name, s.status])).toEqual([
      ['tool', 'add', 'success'],
      ['tool', 'add', 'failed'],
      ['tool', 'explode', 'failed'],
      ['tool', 'ghost', 'failed'],
    ]);
    expect(view?.spans[0]).toMatchObject({ input: { arguments: { a: 1, b: 2 } }, output: { sum: 3 }, error: null });
    expect(view?.spans[1]?.error).toMatch(/^Invalid arguments for add:\na: /);
    expect(view?.spans[2]).toMatchObject({ output: null, error: 'explode failed: the site database is offline' });
    expect(view?.spans[3]?.error).toMatch(/Unknown tool "ghost"/);
  });

  it("records a tool's arguments as its traceArguments keeps them, and a placeholder when that hook throws, while the tool gets them whole", async () => {
    const store = createTraceStore(database.db);
    const run = await store.start({ kind: 'agent', name: 'tool-trace-arguments' });
    const seen: unknown[] = [];
    const registry = createToolRegistry();
    registry.register<{ note: string; phone: string }>({
      name: 'save_note',
      description: 'Save a note.',
      schema: z.object({ note: z.string(), phone: z.string() }),
      run: (args) => {
        seen.push(args);
        return { saved: true };
      },
      traceArguments: (args) => {
        const { phone: _phone, ...rest } = (typeof args === 'string' ? JSON.parse(args) : args) as Record<string, unknown>;
        return rest;
      },
    });
    registry.register<{ phone: string }>({
      name: 'broken_hook',
      description: 'A tool whose trace hook throws.',
      schema: z.object({ phone: z.string() }),
      run: () => ({ ok: true }),
      traceArguments: () => {
        throw new Error('cannot read these arguments');
      },
    });

    const saved = await registry.run('save_note', '{"note": "itchy", "phone": "13812345678"}', run);
    const broken = await registry.run('broken_hook', { phone: '13812345678' }, run);

    expect(saved.success).toBe(true);
    expect(broken.success).toBe(true);
    expect(seen).toEqual([{ note: 'itchy', phone: '13812345678' }]);
    const view = await store.get(run.traceId, ALL_TRACES);
    expect(view?.spans.map((s) => s.input)).toEqual([{ arguments: { note: 'itchy' } }, { arguments: ARGUMENTS_WITHHELD }]);
    expect(JSON.stringify(view)).not.toContain('13812345678');
  });
});
