import { readFileSync } from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../core/paths.js';

/**
 * The oldest Node.js this package runs on: package.json's `engines.node` (">=22.15.0", the OpenTelemetry SDK's
 * floor). Read from the file so the check and npm's EBADENGINE warning can never disagree.
 */
export function oldestSupportedNode(): string {
  const manifest = JSON.parse(readFileSync(path.join(packageRoot(), 'package.json'), 'utf8')) as { engines?: { node?: string } };
  const floor = /^>=\s*(\d+\.\d+\.\d+)$/.exec(manifest.engines?.node ?? '')?.[1];
  if (!floor) throw new Error(`package.json engines.node must read ">=X.Y.Z"; it reads ${JSON.stringify(manifest.engines?.node)}`);
  return floor;
}

function atLeast(version: string, floor: string): boolean {
  const [a, b] = [version, floor].map((v) => v.split('.').map((part) => Number.parseInt(part, 10) || 0));
  for (let i = 0; i < 3; i += 1) {
    if (a![i]! !== b![i]!) return a![i]! > b![i]!;
  }
  return true;
}

/**
 * Why this Node cannot run ClinAgent, or undefined when it can. The bin script asks before it loads anything else,
 * so someone who starts `bin/clinagent.js` with an old system Node reads what to do instead of a syntax error deep
 * in a dependency. Through npm (`npm start`, `npm run cli`) the Node 24 that `npm ci` installs is used.
 */
export function nodeFloorProblem(version: string, execPath: string, floor = oldestSupportedNode()): string | undefined {
  if (atLeast(version, floor)) return undefined;
  return [
    `ClinAgent needs Node.js ${floor} or later (24 LTS is what it is tested on); this is Node.js ${version} (${execPath}).`,
    'Run it through npm, which uses the Node 24 that `npm ci` installed into node_modules: `npm start`, or `npm run cli -- <command>`.',
    'Or install Node.js 24 on this machine and run bin/clinagent.js with it.',
  ].join('\n');
}
