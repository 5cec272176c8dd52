#!/usr/bin/env node
// Runs the built CLI (npm run build); `npm run cli -- <command>` runs it from source instead.
// The Node version is checked first, with nothing else loaded, so an old Node gets a sentence rather than a crash.
import { nodeFloorProblem } from '../dist/cli/node-floor.js';

const problem = nodeFloorProblem(process.versions.node, process.execPath);
if (problem) {
  console.error(problem);
  process.exit(1);
}
await import('../dist/cli/entry.js');
