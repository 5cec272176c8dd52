import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentResult } from '../runtime/result.js';
import { killRunningClis, runCli } from '../testing/run-cli.js';
import { startScriptedModel } from '../testing/scripted-model.js';

/**
 * The CLI as users run it: `src/cli/entry.ts` in a child process, configured by environment only. Each start
 * costs a few seconds (tsx, PGlite), so these tests cover each command's contract once; the libraries behind
 * the commands have their own tests.
 */

afterAll(killRunningClis);

describe.concurrent('clinagent without a database', () => {
  it('prints the usage and exits 0 for --help', async () => {
    const { code, stdout } = await runCli(['--help']);

    expect(code).toBe(0);
    expect(stdout).toMatch(/^Usage: clinagent <command>/);
    for (const command of ['serve', 'worker', 'migrate', 'run', 'ingest', 'login-link', 'token', 'audit', 'import', 'qc']) expect(stdout).toMatch(new RegExp(`^  ${command}\\b`, 'm'));
  });

  it('exits 1 naming an unknown command', async () => {
    const { code, stderr } = await runCli(['frobnicate']);

    expect(code).toBe(1);
    expect(stderr).toContain('Unknown command "frobnicate"');
  });

  it('refuses to start a worker without DATABASE_URL and says why', async () => {
    const { code, stderr } = await runCli(['worker']);

    expect(code).toBe(1);
    expect(stderr).toMatch(/^clinagent worker: CONFIG_MISSING: .*DATABASE_URL/);
  });
});

// One PGlite data folder for the whole block: creating one costs about ten seconds, and a folder belongs to
// one process at a time, so these run in order.
describe('clinagent on an embedded database folder', () => {
  let workDir: string;
  let dataDir: string;

  beforeAll(async () => {
    workDir = await mkdtemp(path.join(tmpdir(), 'clinagent-cli-'));
    dataDir = path.join(workDir, 'data');
  });

  afterAll(async () => {
    await rm(workDir, { recursive: true, force: true });
  });

  it('applies the migrations to a new data folder with migrate', async () => {
    const { code, stdout, stderr } = await runCli(['migrate'], { DATA_DIR: dataDir });

    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toBe(`Migrations applied (pglite).\nCreated the audit key file ${dataDir}.audit-key: back it up now, apart from the database; without it the audit trail cannot be verified.\n`);
    expect((await readdir(dataDir)).length).toBeGreaterThan(0);
  });

  it('prints a failed AgentResult naming LLM_BASE_URL and exits 1 when no LLM is configured', async () => {
    const { code, stdout } = await runCli(['run', 'data-completeness', 'check'], { DATA_DIR: dataDir });

    expect(code).toBe(1);
    // stdout is the result JSON alone, so scripts can parse it.
    const result = JSON.parse(stdout) as AgentResult;
    expect(result.status).toBe('failed');
    expect(result.error).toContain('LLM_BASE_URL');
    expect(result.traceId).toEqual(expect.any(String));
  });

  it('runs a scenario against the configured model and prints the successful AgentResult', async () => {
    const report = { summary: 'One consent date is missing.', completion_rate: 0.97, issues: [{ record_id: 'S-003', field: 'consent_date', problem: 'missing' }], action_items: ['Ask site 01 for the consent date of S-003'] };
    const model = await startScriptedModel([
      { toolCalls: [{ name: 'check_required_fields', arguments: { required_fields: ['consent_date'] } }] },
      { reply: JSON.stringify(report) },
    ]);
    try {
      const { code, stdout, stderr } = await runCli(['run', 'data-completeness', 'check', 'consent', 'dates'], { DATA_DIR: dataDir, LLM_BASE_URL: model.baseURL, LLM_MODEL: 'scripted-qwen' });

      expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
      const result = JSON.parse(stdout) as AgentResult;
      expect(result).toMatchObject({ status: 'success', error: '', answer: report.summary, structuredOutput: report, modelName: 'scripted-qwen' });
      expect(result.toolCalls).toEqual([expect.objectContaining({ toolName: 'check_required_fields', success: true })]);
      expect(model.requests).toHaveLength(2);
      expect(model.requests[0]!.body).toMatchObject({ model: 'scripted-qwen' });
      expect(JSON.stringify(model.requests[0]!.body.messages)).toContain('check consent dates');
    } finally {
      await model.close();
    }
  });

  it('ingests a Markdown file into a scenario and prints its chunk count', async () => {
    const file = path.join(workDir, 'amendment-2.md');
    await writeFile(file, '# Amendment 2\n\nVisit 3 moves from week 8 to week 10.\n\n## Rationale\n\nSites asked for more time to collect 24-hour ambulatory blood pressure.\n');

    const { code, stdout } = await runCli(['ingest', 'protocol-qa', file], { DATA_DIR: dataDir });

    expect(code).toBe(0);
    expect(stdout).toMatch(/^Ingested amendment-2\.md as \S+: 1 chunk\.\nSearch index: none needed \(1 chunk; a scenario gets one from \d+\); searches are exact\.\n$/);
  });

  it('leaves a large scope\'s graph to the server: built here it would end with the command', async () => {
    // About 3 100 chunks of ~900 characters: above the size from which a scope gets an index.
    const sections = Array.from({ length: 3_100 }, (_, i) => `## Section ${i}\n\n${`Visit ${i % 12} of arm ${i % 7}: record vital signs, adverse events ${i} and dosing deviations. `.repeat(10)}`);
    const file = path.join(workDir, 'large-protocol.md');
    await writeFile(file, `# Large protocol\n\n${sections.join('\n\n')}\n`);

    const { code, stdout } = await runCli(['ingest', 'protocol-qa', file], { DATA_DIR: dataDir });

    expect(code).toBe(0);
    expect(stdout).toMatch(/Ingested large-protocol\.md as \S+: \d+ chunks\.\nSearch index: built in the server's memory when it starts \(\d+ chunks\); searches are exact until then\.\n$/);
    expect(stdout).not.toContain('Indexing');
  });

  it('refuses to ingest a Word file with UNSUPPORTED_FILE and what to do instead', async () => {
    const file = path.join(workDir, 'protocol.docx');
    await writeFile(file, Buffer.from('PK\u0003\u0004 not really a docx'));

    const { code, stdout, stderr } = await runCli(['ingest', 'protocol-qa', file], { DATA_DIR: dataDir });

    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toMatch(/^clinagent ingest: UNSUPPORTED_FILE: "protocol\.docx" is not a supported document type\..*\.md.*\.pdf/);
  });
});
