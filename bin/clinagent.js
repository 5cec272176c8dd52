#!/usr/bin/env node
// Runs the built CLI (npm run build); `npm run cli -- <command>` runs it from source instead.
import '../dist/cli/entry.js';
