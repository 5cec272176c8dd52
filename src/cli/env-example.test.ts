import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../core/paths.js';

/**
 * `clinagent --help` sends operators to .env.example for the settings: every variable the configuration reads
 * (the keys of envSchema in src/core/config.ts) is there, with a comment, so none is only discoverable in the code.
 */
describe('.env.example', () => {
  it('names every variable the configuration reads', () => {
    const config = readFileSync(path.join(packageRoot(), 'src', 'core', 'config.ts'), 'utf8');
    const schema = config.slice(config.indexOf('const envSchema = z.object({'), config.indexOf('\n});', config.indexOf('const envSchema')));
    const read = [...schema.matchAll(/^ {2}([A-Z][A-Z0-9_]+):/gm)].map((match) => match[1]!);
    expect(read.length).toBeGreaterThan(30);
    const example = readFileSync(path.join(packageRoot(), '.env.example'), 'utf8');
    const written = new Set([...example.matchAll(/^#? ?([A-Z][A-Z0-9_]+)=/gm)].map((match) => match[1]!));
    expect(read.filter((name) => !written.has(name))).toEqual([]);
  });
});
