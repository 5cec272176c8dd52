import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../core/paths.js';
import { nodeFloorProblem, oldestSupportedNode } from './node-floor.js';

const root = packageRoot();
const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
  engines: { node: string };
  devDependencies: Record<string, string>;
  allowScripts?: Record<string, boolean>;
};

describe('the Node.js floor', () => {
  it('is package.json engines.node, Node 22.15 (the OpenTelemetry SDK needs it)', () => {
    expect(manifest.engines.node).toBe('>=22.15.0');
    expect(oldestSupportedNode()).toBe('22.15.0');
  });

  it('refuses an older Node with what to do instead, and accepts the floor and every later release', () => {
    const problem = nodeFloorProblem('20.20.2', '/usr/bin/node', '22.15.0');
    expect(problem).toContain('needs Node.js 22.15.0 or later');
    expect(problem).toContain('this is Node.js 20.20.2 (/usr/bin/node)');
    expect(problem).toContain('npm start');
    expect(nodeFloorProblem('22.14.9', '/n', '22.15.0')).toBeDefined();
    expect(nodeFloorProblem('21.99.0', '/n', '22.15.0')).toBeDefined();
    for (const ok of ['22.15.0', '22.15.1', '22.16.0', '23.0.0', '24.0.0', '24.21.0', '26.1.0']) expect(nodeFloorProblem(ok, '/n', '22.15.0'), ok).toBeUndefined();
  });

  it('runs this suite on a supported Node', () => {
    expect(nodeFloorProblem(process.versions.node, process.execPath)).toBeUndefined();
  });
});

describe('npm scripts run on the Node 24 that npm ci installs', () => {
  it('depends on the registry\'s node package pinned to 24, with its install script allowed', () => {
    expect(manifest.devDependencies.node).toMatch(/^\^24\./);
    expect(manifest.allowScripts?.node).toBe(true);
  });

  it('puts Node 24 first for every npm script, whatever Node the machine has on its PATH', () => {
    // PATH as a shell on this machine has it, without the node_modules/.bin an npm script (this suite) added:
    // the machine's own Node comes first there (v20 on the CI machines), and npm must still pick Node 24.
    const machinePath = (process.env.PATH ?? '').split(path.delimiter).filter((dir) => !dir.includes(`${path.sep}node_modules${path.sep}`)).join(path.delimiter);
    const version = execFileSync('npm', ['exec', '--offline', '--', 'node', '-p', 'process.versions.node'], { cwd: root, env: { ...process.env, PATH: machinePath }, encoding: 'utf8' }).trim();
    expect(version).toMatch(/^24\./);
  });
});
