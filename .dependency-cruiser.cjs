/**
 * The layering of ClinAgent (STYLE.md, "Dependencies point one way"), checked by `npm run lint:deps`, which
 * `npm test` runs before the tests: core <- rag <- runtime (the agent runtime) <- areas <- {http, cli}, and the console sees only the
 * API contract. A violation fails the build naming the importing file and the import.
 *
 * Tests (`*.test.ts`, `*.bench.ts`) and src/testing are exempt from the layer rules: they assemble whole servers
 * and contexts on purpose. Only they may import src/testing. `src/*.ts` at the top (context.ts, main.ts,
 * workers.ts, index.ts) is the composition root, which no layer below http and cli may import.
 * src/layer-rules.test.ts plants a forbidden import of each kind in a fixture tree to prove every rule is live.
 */

/** Product areas: each imports core, rag and runtime, and never another area (shared needs move down, not sideways). */
const AREAS = 'trial|memory|investigate|protocol|consult|demo-tools';
const TESTS = '[.](test|bench)[.]ts$';

module.exports = {
  forbidden: [
    {
      name: 'core-imports-no-other-layer',
      comment: 'src/core is the platform: it imports no area, no rag, no runtime, no http or cli, and not the composition root.',
      severity: 'error',
      from: { path: '^src/core/', pathNot: TESTS },
      to: { path: '^src/', pathNot: '^src/core/' },
    },
    {
      name: 'rag-imports-only-core',
      severity: 'error',
      from: { path: '^src/rag/', pathNot: TESTS },
      to: { path: '^src/', pathNot: '^src/(core|rag)/' },
    },
    {
      name: 'runtime-imports-only-core-and-rag',
      comment: 'Besides core and rag, the agent runtime may read the API contract, a leaf of zod schemas: its run events are declared there once and inferred in src/runtime/loop/events.ts.',
      severity: 'error',
      from: { path: '^src/runtime/', pathNot: TESTS },
      to: { path: '^src/', pathNot: '^src/(core|rag|runtime|contract)/' },
    },
    {
      name: 'area-imports-only-core-rag-runtime',
      comment: 'A product area never imports another area, nor http, cli or the composition root (src/context.ts).',
      severity: 'error',
      from: { path: `^src/(${AREAS})/`, pathNot: TESTS },
      to: { path: '^src/', pathNot: ['^src/(core|rag|runtime)/', '^src/$1/'] },
    },
    {
      name: 'agents-import-only-core-rag-runtime',
      comment: 'Each agent in src/agents/<name> is an area of its own: it never imports another agent or area.',
      severity: 'error',
      from: { path: '^src/agents/([^/]+)/', pathNot: TESTS },
      to: { path: '^src/', pathNot: ['^src/(core|rag|runtime)/', '^src/agents/$1/'] },
    },
    {
      name: 'chat-imports-no-shell',
      comment: 'src/chat dispatches a chat message to the areas (memory, investigate, trial); it composes them, so it may import them, but never http, cli or the composition root.',
      severity: 'error',
      from: { path: '^src/chat/', pathNot: TESTS },
      to: { path: '^src/', pathNot: [`^src/(core|rag|runtime|chat|${AREAS})/`] },
    },
    {
      name: 'mcp-server-imports-no-shell',
      comment: "src/mcp/server offers the areas' services as MCP tools acting for a user: it composes them (trial, the Protocol Agent), so it may import them and the API contract, but never http, cli, chat or the composition root.",
      severity: 'error',
      from: { path: '^src/mcp/server/', pathNot: TESTS },
      to: { path: '^src/', pathNot: [`^src/(core|rag|runtime|contract|agents|mcp/server|${AREAS})/`] },
    },
    {
      name: 'mcp-client-imports-only-core-runtime',
      comment: 'src/mcp/client connects to the MCP servers an administrator configured and puts their tools in the one registry: it needs core (registry, errors, URL policy) and the scenario key it answers (runtime/scenarios/mcp-block.ts), never an area, http, cli or the composition root.',
      severity: 'error',
      from: { path: '^src/mcp/client/', pathNot: TESTS },
      to: { path: '^src/', pathNot: ['^src/(core|runtime|mcp/client)/'] },
    },
    {
      name: 'only-tests-import-testing',
      comment: 'src/testing is test harness code; the library, http and cli never import it.',
      severity: 'error',
      from: { path: '^src/', pathNot: [TESTS, '^src/testing/'] },
      to: { path: '^src/testing/' },
    },
    {
      name: 'contract-imports-only-contract',
      comment: 'The console bundles src/contract: anything it imports from the server would be bundled too.',
      severity: 'error',
      from: { path: '^src/contract/', pathNot: TESTS },
      to: { path: '^src/', pathNot: '^src/contract/' },
    },
    {
      name: 'console-imports-only-contract',
      comment: 'web/src imports only itself, the API contract (src/contract) and npm packages: types included.',
      severity: 'error',
      from: { path: '^web/src/' },
      to: { pathNot: ['^web/src/', '^src/contract/', '(^|/)node_modules/'] },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'An import nobody can resolve (a typo, a moved file) matches no path rule, so it must fail on its own.',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: '(^|/)node_modules/' },
    exclude: { path: '(^|/)dist/' },
    // Resolves our `.js` import specifiers to the `.ts` sources; type-only imports count as imports.
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    // Packages such as csv-parse expose `csv-parse/sync` only through "exports" conditions.
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
  },
};
