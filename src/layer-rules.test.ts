import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from './core/paths.js';

/**
 * `npm run lint:deps` (in `npm test`) checks the layering with .dependency-cruiser.cjs. A rule whose pattern
 * matches nothing passes silently, so this runs the same command with the same config over a small tree that
 * plants one forbidden import of each kind next to allowed ones, and expects exactly the forbidden ones named.
 */

const root = packageRoot();
const depcruise = path.join(root, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');

const FILES: Record<string, string> = {
  'tsconfig.json': JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true }, include: ['src'] }),
  'src/core/errors.ts': 'export const E = 1;\n',
  'src/core/leaks.ts': "import { T } from '../trial/trial-qc.js';\nexport const L = T;\n",
  'src/core/reads-root.ts': "import type { Ctx } from '../context.js';\nexport type R = Ctx;\n",
  'src/rag/store.ts': "import { E } from '../core/errors.js';\nimport { A } from '../runtime/run.js';\nexport const S = E + A;\n",
  'src/runtime/run.ts': "import { E } from '../core/errors.js';\nexport const A = E;\n",
  'src/runtime/reads-area.ts': "import { T } from '../trial/trial-qc.js';\nexport const X = T;\n",
  'src/trial/trial-qc.ts': "import { E } from '../core/errors.js';\nimport { A } from '../runtime/run.js';\nimport { S } from '../rag/store.js';\nimport { Q } from './queries.js';\nexport const T = E + A + S + Q;\n",
  'src/trial/queries.ts': 'export const Q = 1;\n',
  'src/trial/reads-root.ts': "import type { Ctx } from '../context.js';\nexport type R = Ctx;\n",
  'src/trial/typo.ts': "import { E } from '../core/erors.js';\nexport const Y = E;\n",
  'src/trial/trial-qc.test.ts': "import { H } from '../testing/harness.js';\nimport { P } from '../http/routes.js';\nimport { M } from '../memory/recall.js';\nexport const Z = H + P + M;\n",
  'src/memory/recall.ts': "import { T } from '../trial/trial-qc.js';\nexport const M = T;\n",
  'src/agents/protocol/agent.ts': "import { A } from '../../runtime/run.js';\nimport { C } from '../consult/agent.js';\nimport { Own } from './own.js';\nexport const PA = A + C + Own;\n",
  'src/agents/protocol/own.ts': 'export const Own = 1;\n',
  // The chat dispatcher composes areas (allowed) but never reaches up into http.
  'src/chat/dispatch.ts': "import { T } from '../trial/trial-qc.js';\nimport { M } from '../memory/recall.js';\nimport { P } from '../http/routes.js';\nexport const D = T + M + P;\n",
  'src/agents/consult/agent.ts': 'export const C = 1;\n',
  'src/http/routes.ts': "import { T } from '../trial/trial-qc.js';\nimport type { Ctx } from '../context.js';\nimport { H } from '../testing/harness.js';\nexport const P = T + H;\nexport type PC = Ctx;\n",
  'src/cli/qc.ts': "import { T } from '../trial/trial-qc.js';\nimport { M } from '../memory/recall.js';\nexport const Q = T + M;\n",
  'src/context.ts': "import { T } from './trial/trial-qc.js';\nexport interface Ctx { t: typeof T }\n",
  'src/testing/harness.ts': "import type { Ctx } from '../context.js';\nexport const H = 1;\nexport type HC = Ctx;\n",
  'src/contract/api.ts': 'export interface Health { ok: boolean }\n',
  'src/contract/leaks.ts': "import { E } from '../core/errors.js';\nexport const CL = E;\n",
  'web/src/api.ts': "import type { Health } from '../../src/contract/api.js';\nimport { U } from './util.js';\nexport type H = Health;\nexport const W = U;\n",
  'web/src/util.ts': 'export const U = 1;\n',
  // MCP: the server's tools compose area services (allowed) but never the http shell; the client is core and runtime only.
  'src/mcp/server/tools.ts': "import { T } from '../../trial/trial-qc.js';\nimport { P } from '../../http/routes.js';\nexport const MT = T + P;\n",
  'src/mcp/client/connect.ts': "import { A } from '../../runtime/run.js';\nimport { T } from '../../trial/trial-qc.js';\nexport const MC = A + T;\n",
  'web/src/server-types.ts': "import type { Q } from '../../src/trial/queries.js';\nexport type WQ = typeof Q;\n",
};

describe('the dependency rules of npm run lint:deps', () => {
  let dir: string;
  let result: { exitCode: number; violations: string[] };

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'clinagent-layers-'));
    for (const [file, text] of Object.entries(FILES)) {
      mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      writeFileSync(path.join(dir, file), text);
    }
    // The same command as `npm run lint:deps`, with its default output: one `error <rule>: <from> → <to>` line each.
    const args = [depcruise, '--config', path.join(root, '.dependency-cruiser.cjs'), 'src', 'web/src'];
    const { stdout, exitCode } = await promisify(execFile)(process.execPath, args, { cwd: dir, maxBuffer: 16 * 1024 * 1024 }).then(
      (done) => ({ stdout: done.stdout, exitCode: 0 }),
      (error: { stdout: string; code: number }) => ({ stdout: error.stdout, exitCode: error.code }),
    );
    const violations = [...stdout.matchAll(/^\s*error (\S+): (\S+) → (\S+)$/gm)].map(([, rule, from, to]) => `${rule}: ${from} -> ${to}`);
    result = { exitCode, violations: violations.sort() };
  }, 60_000);

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('fails with an exit code, naming each planted forbidden import and only those', () => {
    expect(result.violations).toEqual([
      'agents-import-only-core-rag-runtime: src/agents/protocol/agent.ts -> src/agents/consult/agent.ts',
      'area-imports-only-core-rag-runtime: src/memory/recall.ts -> src/trial/trial-qc.ts',
      'area-imports-only-core-rag-runtime: src/trial/reads-root.ts -> src/context.ts',
      'chat-imports-no-shell: src/chat/dispatch.ts -> src/http/routes.ts',
      'console-imports-only-contract: web/src/server-types.ts -> src/trial/queries.ts',
      'contract-imports-only-contract: src/contract/leaks.ts -> src/core/errors.ts',
      'core-imports-no-other-layer: src/core/leaks.ts -> src/trial/trial-qc.ts',
      'core-imports-no-other-layer: src/core/reads-root.ts -> src/context.ts',
      'mcp-client-imports-only-core-runtime: src/mcp/client/connect.ts -> src/trial/trial-qc.ts',
      'mcp-server-imports-no-shell: src/mcp/server/tools.ts -> src/http/routes.ts',
      'not-to-unresolvable: src/trial/typo.ts -> ../core/erors.js',
      'only-tests-import-testing: src/http/routes.ts -> src/testing/harness.ts',
      'rag-imports-only-core: src/rag/store.ts -> src/runtime/run.ts',
      'runtime-imports-only-core-and-rag: src/runtime/reads-area.ts -> src/trial/trial-qc.ts',
    ]);
    expect(result.exitCode).toBe(14);
  });
});
