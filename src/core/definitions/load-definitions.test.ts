import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createDefinitionCatalog, loadDefinitionFile, loadDefinitions, readDefinitionFolder, type DefinitionKind, type DefinitionSpec } from './index.js';
import { errorOf } from '../../testing/error-of.js';

/** A made-up kind, so the loader is tested without any scenario or skill knowledge. */
const KIND: DefinitionKind = { noun: 'gadget', code: 'SCENARIO_INVALID', fileNames: /\.(ya?ml|json)$/i, folderSetting: 'GADGETS_DIR', formats: 'YAML/JSON', listRoute: 'GET /api/gadgets' };
const schema = z.object({ id: z.string().regex(/^[a-z]+$/, 'must be lowercase letters'), size: z.number().int().positive(), parts: z.array(z.string()).default([]) }).strict();
interface Gadget {
  id: string;
  size: number;
  parts: string[];
  sourceFile: string;
}
const spec: DefinitionSpec<typeof schema, Gadget> = {
  kind: KIND,
  schema,
  build(file, parsed, problems) {
    parsed.parts.forEach((part, i) => {
      if (part === 'ghost') problems.push(`parts.${i}: "ghost" is not a part`);
    });
    if (parsed.size > 10) problems.push('size: at most 10');
    return { ...parsed, sourceFile: file };
  },
};

function folder(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'clinagent-defs-'));
  for (const [name, body] of Object.entries(files)) writeFileSync(path.join(dir, name), body);
  return dir;
}

describe('definition files', () => {
  it('loads YAML and JSON files of a folder into a catalog, ignoring other files', () => {
    const dir = folder({ 'a.yaml': 'id: alpha\nsize: 1\n', 'b.json': '{"id": "beta", "size": 2, "parts": ["x"]}', 'README.md': '# not a gadget' });
    const catalog = loadDefinitions(dir, spec);
    expect(catalog.list().map((g) => g.id)).toEqual(['alpha', 'beta']);
    expect(catalog.get('beta')).toMatchObject({ size: 2, parts: ['x'], sourceFile: path.join(dir, 'b.json') });
    expect(catalog.has('gamma')).toBe(false);
  });

  it('names the file, every bad field and the reason, schema and build problems alike', () => {
    const dir = folder({ 'bad.yaml': 'id: Bad1\nsize: -1\ncolour: red\n', 'built.yaml': 'id: built\nsize: 11\nparts: [ok, ghost]\n' });
    const schemaError = errorOf(() => loadDefinitionFile(path.join(dir, 'bad.yaml'), spec));
    expect(schemaError).toMatchObject({ code: 'SCENARIO_INVALID', details: { file: path.join(dir, 'bad.yaml') } });
    expect(schemaError.message).toMatch(/bad\.yaml is not a valid gadget:\n- id: must be lowercase letters\n- size: /);
    expect(schemaError.message).toContain('colour');
    const buildError = errorOf(() => loadDefinitionFile(path.join(dir, 'built.yaml'), spec));
    expect(buildError.details.problems).toEqual(['parts.1: "ghost" is not a part', 'size: at most 10']);
  });

  it('reports every invalid file of a folder and a duplicate id with both files', () => {
    const dir = folder({ 'one.yaml': 'id: same\nsize: 1\n', 'two.yml': 'id: same\nsize: 2\n', 'three.yaml': 'id: [unclosed\n', 'four.json': '{"id": ' });
    const error = errorOf(() => loadDefinitions(dir, spec));
    expect(error.message).toMatch(/^Invalid gadget files in /);
    expect(error.message).toContain('three.yaml: cannot be read as YAML');
    expect(error.message).toContain('four.json: cannot be read as JSON');
    expect(error.message).toMatch(/two\.yml: id "same" is already used by .*one\.yaml; gadget ids must be unique/);
    expect(error.details.failures).toHaveLength(3);
  });

  it('reads a folder file by file, keeping the valid ones and each failure with its id and problems', () => {
    const dir = folder({ 'a.yaml': 'id: same\nsize: 1\n', 'b.yaml': 'id: same\nsize: 2\n', 'c.yaml': 'id: big\nsize: 11\n', 'd.json': '{"id": ' });
    const { definitions, failures } = readDefinitionFolder(dir, spec);
    expect(definitions.map((g) => g.id)).toEqual(['same']);
    expect(failures.map(({ file, id, problems }) => ({ file: path.basename(file), id, problems }))).toEqual([
      { file: 'b.yaml', id: 'same', problems: [`id "same" is already used by ${path.join(dir, 'a.yaml')}; gadget ids must be unique`] },
      { file: 'c.yaml', id: 'big', problems: ['size: at most 10'] },
      { file: 'd.json', id: undefined, problems: [expect.stringMatching(/^cannot be read as JSON: /)] },
    ]);
    expect(failures[1]!.message).toBe(`${path.join(dir, 'c.yaml')} is not a valid gadget:\n- size: at most 10`);
  });

  it('refuses duplicate ids handed to a catalog directly, naming both files', () => {
    const error = errorOf(() => createDefinitionCatalog([{ id: 'x', sourceFile: '/a.yaml' }, { id: 'x', sourceFile: '/b.yaml' }], KIND));
    expect(error.message).toContain('/b.yaml: id "x" is already used by /a.yaml');
  });

  it('answers an unknown id with NOT_FOUND naming the known ids and where to list them', () => {
    const catalog = createDefinitionCatalog([{ id: 'alpha', sourceFile: '/a.yaml' }], KIND);
    const error = errorOf(() => catalog.get('omega'));
    expect(error).toMatchObject({ code: 'NOT_FOUND', status: 404, details: { gadgetId: 'omega' } });
    expect(error.message).toBe('Unknown gadget "omega". Known gadgets: alpha (GET /api/gadgets).');
  });

  it('says which setting to fix when the folder cannot be read', () => {
    const error = errorOf(() => loadDefinitions(path.join(tmpdir(), 'clinagent-no-such-folder-4711'), spec));
    expect(error).toMatchObject({ code: 'CONFIG_INVALID', details: { field: 'GADGETS_DIR' } });
    expect(error.message).toContain('Set GADGETS_DIR to a folder of gadget YAML/JSON files.');
  });
});
